import { z } from "zod";
import { membershipSchema } from "./member-shapes";
import { roleSchema } from "./project-shapes";
import { named } from "./shape-registry";

/** GET /api/v1/session: who the caller is — a signed-in person (or a key exchanged for a session), or a key. */
export const sessionSchema = z
  .strictObject({
    via: z.enum(["key", "session"]).describe("`session`: a browser's session cookie; `key`: the Api-Key header."),
    user: z.strictObject({ id: z.string(), email: z.string(), name: z.string().nullable() }).nullable().describe("The person signed in; null for keys and for a key exchanged for a session."),
    keyId: z.string().describe("The key the caller acts as (a person's personal key)."),
    keyName: z.string(),
    admin: z.boolean(),
    role: roleSchema.describe("The caller's role in the current project."),
    project: z.strictObject({ slug: z.string(), name: z.string() }).describe("The project the caller acts in now."),
    projects: z.array(membershipSchema).describe("A person's projects (switch with POST /auth/project {project: slug}); empty for keys."),
    csrfToken: z.string().nullable().describe("Sessions: send it in X-CSRF-Token with every POST, PUT, PATCH and DELETE. Null for keys."),
    expiresAt: z.string().nullable().describe("Sessions: when the session ends at the latest (it ends sooner when unused)."),
  })
  .apply(named({ id: "Session" }));
export type SessionView = z.infer<typeof sessionSchema>;
