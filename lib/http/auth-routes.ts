import "server-only";
import { z } from "zod";
import { GenserveError, isGenserveError } from "../errors";
import { authenticate } from "../keys/api-keys";
import { checkCsrf, sameOrigin } from "../people/csrf";
import { LOGIN_COOKIE, LOGIN_TTL_MS } from "../people/oidc";
import { readCookie, serializeCookie, SESSION_COOKIE } from "../people/sessions";
import type { Runtime } from "../server/runtime";
import { clientInfo, sessionOf } from "./caller";
import { json } from "./problem";
import { route } from "./route";

/**
 * The sign-in routes of people (`/auth/*`, outside the API's table and document: browsers follow
 * them, programs use keys). Served by `genserve serve` straight from node:http like the API (and by
 * Next.js with `--dev`), through the same `route()` error mapping. Every sign-in starts a new
 * session; the POSTs answer only pages of this site (login CSRF).
 */

const passwordBody = z.strictObject({ email: z.string().min(1).max(320), password: z.string().min(1).max(4_096) });
const keyBody = z.strictObject({ key: z.string().min(1).max(200) });

export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A short page for a browser whose sign-in did not work (it followed a link or a provider's redirect: no script reads a problem here). */
export function failurePage(error: unknown, runtime: Runtime): Response {
  if (!isGenserveError(error) || error.status >= 500) runtime.logger.warn({ err: { message: (error as Error).message, cause: (error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : undefined } }, "sign-in failed");
  const detail = isGenserveError(error) && error.status < 500 ? error.detail : "The sign-in could not be completed.";
  const status = isGenserveError(error) ? error.status : 500;
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in failed · genserve</title></head><body><main><h1>Sign-in failed</h1><p id="reason">${escapeHtml(detail)}</p><p><a href="/">Back to sign in</a></p></main></body></html>`;
  const headers = new Headers({ "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
  headers.append("Set-Cookie", serializeCookie(LOGIN_COOKIE, "", { maxAgeSeconds: 0, secure: runtime.services.people.secureCookies }));
  return new Response(body, { status, headers });
}

/** Starts a session for the person or key and answers with its cookie (the browser's old session, if any, ends). */
export async function signIn(runtime: Runtime, request: Request, who: { userId: string | null; keyId: string }, answer: (headers: Headers, csrfToken: string) => Response): Promise<Response> {
  const { sessions, secureCookies } = runtime.services.people;
  const old = readCookie(request.headers.get("cookie"), runtime.services.people.sessionCookie);
  if (old) await sessions.end(old);
  const started = await sessions.start(who, clientInfo(request));
  const headers = new Headers({ "Cache-Control": "no-store" });
  headers.append("Set-Cookie", sessions.cookie(started.token, secureCookies));
  return answer(headers, started.csrfToken);
}

export const redirect = (headers: Headers, location: string) => {
  headers.set("Location", location);
  return new Response(null, { status: 303, headers });
};

export function requireSameOrigin(runtime: Runtime, request: Request) {
  if (!sameOrigin(request, runtime.publicUrl)) throw new GenserveError("csrf_refused", { detail: "Sign in from this site's own pages." });
}

/** What the sign-in page offers. */
export const providers = route(async ({ runtime }) => {
  const { oidc } = runtime.services.people;
  return json({ oidc: oidc ? { label: oidc.label, loginUrl: "/auth/login" } : null, password: true, key: true });
});

/** GET /auth/login?returnTo=/path: off to the identity provider. */
export const login = route(async ({ runtime, request }) => {
  const { oidc, secureCookies } = runtime.services.people;
  if (!oidc) throw new GenserveError("not_found", { detail: "No identity provider is configured (auth.oidc in genserve.yaml)." });
  const { url, state } = await oidc.begin(new URL(request.url).searchParams.get("returnTo"));
  const headers = new Headers({ "Cache-Control": "no-store", Location: url });
  headers.append("Set-Cookie", serializeCookie(LOGIN_COOKIE, state, { maxAgeSeconds: LOGIN_TTL_MS / 1000, secure: secureCookies }));
  return new Response(null, { status: 302, headers });
});

/** GET /auth/callback: the provider's answer; a session, and back where the person started. */
export const callback = route(async ({ runtime, request }) => {
  const { oidc, secureCookies } = runtime.services.people;
  try {
    if (!oidc) throw new GenserveError("not_found", { detail: "No identity provider is configured." });
    const { user, returnTo } = await oidc.finish(new URL(request.url).search, readCookie(request.headers.get("cookie"), runtime.services.people.loginCookie));
    const key = await runtime.services.people.accounts.personalKey(user.id);
    return await signIn(runtime, request, { userId: user.id, keyId: key.id }, (headers) => {
      headers.append("Set-Cookie", serializeCookie(LOGIN_COOKIE, "", { maxAgeSeconds: 0, secure: secureCookies }));
      return redirect(headers, returnTo);
    });
  } catch (error) {
    return failurePage(error, runtime);
  }
});

/**
 * GET /auth/link/{token}: the page a one-time sign-in link (`genserve users create`) opens. It uses
 * nothing up — mail and chat link scanners fetch links before people do — and only asks to continue:
 * its form POSTs the token back to this site (no script needed).
 */
export const linkPage = route<{ token: string }>(async ({ params }) => {
  const action = `/auth/link/${encodeURIComponent(params.token)}`;
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign in · genserve</title></head><body><main><h1>Sign in to genserve</h1><p>This one-time link signs you in on this browser.</p><form method="post" action="${escapeHtml(action)}"><button type="submit">Continue signing in</button></form></main></body></html>`;
  return new Response(body, { status: 200, headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" } });
});

/** POST /auth/link/{token}: uses the one-time link up and signs in (from this site's own page only: no login CSRF). */
export const link = route<{ token: string }>(async ({ runtime, request, params }) => {
  try {
    requireSameOrigin(runtime, request);
    const user = await runtime.services.people.accounts.redeem(params.token);
    const key = await runtime.services.people.accounts.personalKey(user.id);
    return await signIn(runtime, request, { userId: user.id, keyId: key.id }, (headers) => redirect(headers, "/"));
  } catch (error) {
    return failurePage(error, runtime);
  }
});

/** POST /auth/password {email, password}: a local account's sign-in (rate-limited; one answer for every wrong part). */
export const password = route(async ({ runtime, request, body }) => {
  requireSameOrigin(runtime, request);
  const input = await body(passwordBody, { callerSchema: "as data" });
  const user = await runtime.services.people.accounts.passwordSignIn(input.email, input.password, clientInfo(request).ip);
  const key = await runtime.services.people.accounts.personalKey(user.id);
  return signIn(runtime, request, { userId: user.id, keyId: key.id }, (headers, csrfToken) => json({ csrfToken }, { headers: Object.fromEntries(headers) }));
});

/** POST /auth/key {key}: exchanges an API key for a session, so the browser keeps no key (the printed admin key signs in this way). */
export const key = route(async ({ runtime, request, body }) => {
  requireSameOrigin(runtime, request);
  const input = await body(keyBody, { callerSchema: "as data" });
  const caller = await authenticate(runtime.store, input.key);
  return signIn(runtime, request, { userId: null, keyId: caller.keyId }, (headers, csrfToken) => json({ csrfToken }, { headers: Object.fromEntries(headers) }));
});

/**
 * POST /auth/logout (`?everywhere=1`: every session of the person): ends the session. From this
 * site's pages only (else 403 and the cookie stays); a live session also needs its CSRF token. The
 * cookie is cleared once those checks passed, also when its session had ended already.
 */
export const logout = route(async ({ runtime, request }) => {
  requireSameOrigin(runtime, request);
  const { sessions, secureCookies } = runtime.services.people;
  const token = readCookie(request.headers.get("cookie"), runtime.services.people.sessionCookie);
  const current = token ? await sessionOf(runtime, request).catch(() => null) : null;
  let ended = 0;
  if (current && token) {
    checkCsrf(request, runtime.publicUrl, current.session.csrfToken);
    if (new URL(request.url).searchParams.get("everywhere") === "1") ended = await sessions.endEverywhere(current.session);
    else ended = (await sessions.end(token), 1);
  }
  return new Response(JSON.stringify({ ended }), {
    status: 200,
    headers: { "Content-Type": "application/json", "Cache-Control": "no-store", "Set-Cookie": serializeCookie(SESSION_COOKIE, "", { maxAgeSeconds: 0, secure: secureCookies }) },
  });
});
