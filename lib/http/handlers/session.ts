import "server-only";
import { sessionSchema } from "../../api/session-shapes";
import { endpoint, VIEWER } from "../endpoint";
import { reply } from "../problem";

export const endpoints = [
  endpoint({
    method: "GET",
    path: "/api/v1/session",
    operationId: "getSession",
    summary: "Who is calling: the person signed in and the key they act as, with the session's CSRF token",
    description:
      "With a session cookie (a browser signed in through /auth/*), the person, the key they act as, the project they act in and their other projects, and the CSRF token that every change sent with the cookie must carry in `X-CSRF-Token`. With an Api-Key, the key (no CSRF token: keys need none).",
    auth: VIEWER,
    responses: { "200": { description: "The caller.", body: sessionSchema } },
    errors: ["unauthorized"],
    handler: async ({ principal, session, runtime }) => {
      const caller = await principal();
      const current = session();
      const user = caller.userId ? await runtime.services.people.accounts.get(caller.userId) : null;
      const [project, projects] = await Promise.all([runtime.services.projects.own(caller), user ? runtime.services.people.members.projectsOf(user.id) : []]);
      return reply(sessionSchema, {
        via: caller.via,
        user: user ? { id: user.id, email: user.email, name: user.name } : null,
        keyId: caller.keyId,
        keyName: caller.name,
        admin: caller.admin,
        role: caller.role,
        project: { slug: project.slug, name: project.name },
        projects: projects.map((p) => ({ slug: p.slug, name: p.name, role: p.role })),
        csrfToken: current?.session.csrfToken ?? null,
        expiresAt: current?.session.expiresAt ?? null,
      });
    },
  }),
];
