import "server-only";
import { authenticate, type Principal } from "../keys/api-keys";
import { checkCsrf, UNSAFE_METHODS } from "../people/csrf";
import { readCookie, type ClientInfo, type ResolvedSession } from "../people/sessions";
import type { Runtime } from "../server/runtime";

/**
 * The client's address: `genserve serve` sets it on every request, API or page, dropping any copy a
 * client sent — the connection's address, or X-Forwarded-For's through `server.trustedProxies`
 * (lib/cli/client-address.ts).
 */
export const PEER_HEADER = "x-genserve-peer";

export const clientInfo = (request: Request): ClientInfo => ({ ip: request.headers.get(PEER_HEADER), userAgent: request.headers.get("user-agent") });

/** The session cookie's live session, or null when the request has no cookie (401 when it has one that is not live). */
export async function sessionOf(runtime: Runtime, request: Request): Promise<ResolvedSession | null> {
  const cookies = request.headers.get("cookie");
  if (!cookies) return null;
  const token = readCookie(cookies, runtime.services.people.sessionCookie);
  if (!token) return null;
  return runtime.services.people.sessions.resolve(token);
}

/**
 * Who is calling: the key the request presents (`credential`: the `Api-Key` header as always, its
 * contract unchanged; a bearer token on the OpenAI-compatible routes), otherwise — where `sessions`
 * — the session cookie of a signed-in browser. A cookie-authenticated change (POST, PUT, PATCH,
 * DELETE) must also come from this site and carry the session's CSRF token; a key needs neither (no
 * browser sends it by itself). Neither: 401 as before.
 */
export async function callerOf(runtime: Runtime, request: Request, credential: string | null, sessions: boolean, resolved: (session: ResolvedSession) => void): Promise<Principal> {
  if (credential !== null && credential.trim() !== "") return authenticate(runtime.store, credential);
  const session = sessions ? await sessionOf(runtime, request) : null;
  if (!session) return authenticate(runtime.store, null);
  if (UNSAFE_METHODS.has(request.method.toUpperCase())) checkCsrf(request, runtime.publicUrl, session.session.csrfToken);
  resolved(session);
  return session.principal;
}
