/**
 * A project's people and invitations as the members API shows them (admins), and the projects a
 * person signed in may switch between. Browser-safe.
 */
import { z } from "zod";
import { named } from "./shape-registry";
import { roleSchema } from "./project-shapes";

export const memberSchema = z
  .strictObject({
    userId: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    role: roleSchema,
    since: z.string().describe("When they joined the project."),
    lastActiveAt: z.string().nullable().describe("When they last used the project (their key or a session acting as it); null: never."),
  })
  .apply(named({ id: "Member", description: "A person in the project: their personal key there carries their role." }));

export const inviteSchema = z
  .strictObject({ id: z.string(), email: z.string(), role: roleSchema, createdAt: z.string(), expiresAt: z.string() })
  .apply(named({ id: "Invite", description: "A pending invitation to the project." }));

export const memberListSchema = z.strictObject({ members: z.array(memberSchema), invites: z.array(inviteSchema) }).apply(named({ id: "MemberList" }));

export const createInviteRequest = z
  .object({ email: z.string().trim().min(3).max(320), role: roleSchema })
  .strict()
  .apply(named({ id: "CreateInviteRequest" }));

export const createdInviteSchema = z
  .strictObject({
    id: z.string(),
    email: z.string(),
    role: roleSchema,
    createdAt: z.string(),
    expiresAt: z.string(),
    url: z.string().describe("The invitation link, to copy and send (shown in this response only; no email is sent). It works once, for 7 days."),
  })
  .apply(named({ id: "CreatedInvite" }));

export const updateMemberRequest = z.object({ role: roleSchema }).strict().apply(named({ id: "UpdateMemberRequest" }));

/** A project the person signed in belongs to. */
export const membershipSchema = z
  .strictObject({ slug: z.string(), name: z.string(), role: roleSchema })
  .apply(named({ id: "Membership", description: "A project the person belongs to, with their role there." }));
