import "server-only";
import { z } from "zod";
import { GenserveError } from "../errors";
import { checkCsrf } from "../people/csrf";
import { readCookie } from "../people/sessions";
import type { Runtime } from "../server/runtime";
import { escapeHtml, failurePage, redirect, requireSameOrigin, signIn } from "./auth-routes";
import { clientInfo, sessionOf } from "./caller";
import { json } from "./problem";
import { route } from "./route";

/**
 * Joining a project by an invitation link, and switching the project a session acts in (`/auth/*`,
 * beside the sign-in routes: browsers follow them).
 */

const projectBody = z.strictObject({ project: z.string().min(1).max(128) });

const page = (title: string, inner: string, status = 200) =>
  new Response(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)} · genserve</title></head><body><main>${inner}</main></body></html>`,
    { status, headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" } },
  );

/** The live session of the request's cookie, or null (none, or ended). */
const currentSession = (runtime: Runtime, request: Request) => sessionOf(runtime, request).catch(() => null);

/**
 * GET /auth/invite/{token}: what the invitation offers ("Join <project> as <role>") and a form that
 * POSTs it back to this site. Nothing is used up by opening it (link scanners fetch links first).
 */
export const invitePage = route<{ token: string }>(async ({ runtime, params }) => {
  try {
    const { invite, project } = await runtime.services.people.members.view(params.token);
    const action = `/auth/invite/${encodeURIComponent(params.token)}`;
    const title = `Join ${project.name} as ${invite.role}`;
    return page(
      title,
      `<h1>${escapeHtml(title)}</h1><p>This invitation is for <strong>${escapeHtml(invite.email)}</strong>. It works once, until ${escapeHtml(invite.expiresAt.slice(0, 10))}.</p><form method="post" action="${escapeHtml(action)}"><button type="submit">Join ${escapeHtml(project.name)}</button></form>`,
    );
  } catch (error) {
    return failurePage(error, runtime);
  }
});

/**
 * POST /auth/invite/{token} (this site's own page only): uses the invitation up. A new person is
 * made and signed in (a new session acting as their key in the project); a person with an account
 * must be signed in as themselves, and their session then switches to the project.
 */
export const invite = route<{ token: string }>(async ({ runtime, request, params }) => {
  try {
    requireSameOrigin(runtime, request);
    const current = await currentSession(runtime, request);
    const { members } = runtime.services.people;
    const joined = await members.accept(params.token, current?.session.userId ?? null);
    const origin = { actor: { kind: "person" as const, id: joined.user.id, label: joined.user.email }, ip: clientInfo(request).ip, userAgent: request.headers.get("user-agent")?.slice(0, 200) ?? null, projectId: joined.key.projectId };
    await runtime.services.audit.record(origin, "member.join", { kind: "user", id: joined.user.id }, { role: { after: joined.key.role }, invite: { after: joined.invite.id } });
    if (current && current.session.userId === joined.user.id) {
      await runtime.services.people.sessions.switchKey(current.session, joined.key.id);
      return redirect(new Headers({ "Cache-Control": "no-store" }), "/");
    }
    return await signIn(runtime, request, { userId: joined.user.id, keyId: joined.key.id }, (headers) => redirect(headers, "/"));
  } catch (error) {
    return failurePage(error, runtime);
  }
});

/**
 * POST /auth/project {project}: the session acts in another of the person's projects from now on
 * (its key becomes their key there). A change by cookie: same origin and the CSRF token; 404 when
 * they are not a member of that project.
 */
export const switchProject = route(async ({ runtime, request, body }) => {
  const token = readCookie(request.headers.get("cookie"), runtime.services.people.sessionCookie);
  const current = token ? await sessionOf(runtime, request) : null;
  if (!current) throw new GenserveError("unauthorized", { detail: "Sign in first." });
  checkCsrf(request, runtime.publicUrl, current.session.csrfToken);
  const { project } = await body(projectBody, { callerSchema: "as data" });
  const userId = current.session.userId;
  if (userId === null) throw new GenserveError("not_found", { detail: `You are not a member of a project "${project}".` });
  const key = await runtime.services.people.members.keyFor(userId, project);
  await runtime.services.people.sessions.switchKey(current.session, key.id);
  return json({ project, role: key.role, keyId: key.id }, { headers: { "Cache-Control": "no-store" } });
});
