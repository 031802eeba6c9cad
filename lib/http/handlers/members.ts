import "server-only";
import { createdInviteSchema, createInviteRequest, memberListSchema, memberSchema, updateMemberRequest } from "../../api/member-shapes";
import { actorOf, changesBetween } from "../../audit/audit-log";
import type { InviteRecord } from "../../store/store-types";
import { audit } from "../audit-origin";
import { ADMIN, endpoint } from "../endpoint";
import { reply } from "../problem";

/** A project's people are its admins' business. */
const MEMBERS = ADMIN("Only the project's admins may manage its members.");

const inviteView = (i: InviteRecord) => ({ id: i.id, email: i.email, role: i.role, createdAt: i.createdAt, expiresAt: i.expiresAt });

export const endpoints = [
  endpoint({
    method: "GET",
    path: "/api/v1/members",
    operationId: "listMembers",
    summary: "The people of this project, with their roles, and its pending invitations (admins)",
    auth: MEMBERS,
    responses: { "200": { description: "Members and invitations.", body: memberListSchema } },
    errors: ["unauthorized", "forbidden"],
    handler: async ({ runtime, principal }) => {
      const caller = await principal();
      const { members } = runtime.services.people;
      const [people, invites] = await Promise.all([members.list(caller), members.pendingInvites(caller)]);
      return reply(memberListSchema, {
        members: people.map((m) => ({ userId: m.userId, email: m.email, name: m.name, role: m.role, since: m.since, lastActiveAt: m.lastActiveAt })),
        invites: invites.map(inviteView),
      });
    },
  }),
  endpoint({
    method: "POST",
    path: "/api/v1/members/invites",
    operationId: "createInvite",
    summary: "Invite a person by email with a role (admins): a one-time link valid 7 days, in this response only (no email is sent)",
    auth: MEMBERS,
    request: { body: createInviteRequest, required: true },
    responses: { "201": { description: "The invitation and its link.", body: createdInviteSchema } },
    errors: ["validation_failed", "unauthorized", "forbidden", "unsupported_media_type"],
    handler: async (ctx) => {
      const caller = await ctx.principal();
      const input = await ctx.body(createInviteRequest);
      const { invite, url } = await ctx.runtime.services.people.members.invite(caller, input, actorOf(caller).id);
      await audit(ctx, "member.invite", { kind: "invite", id: invite.id }, changesBetween(null, { email: invite.email, role: invite.role, expiresAt: invite.expiresAt }));
      return reply(createdInviteSchema, { ...inviteView(invite), url }, { status: 201 });
    },
  }),
  endpoint({
    method: "DELETE",
    path: "/api/v1/members/invites/{id}",
    operationId: "revokeInvite",
    summary: "Revoke a pending invitation (admins): its link stops working",
    auth: MEMBERS,
    responses: { "204": { description: "Revoked." } },
    errors: ["unauthorized", "forbidden", "not_found"],
    handler: async (ctx) => {
      await ctx.runtime.services.people.members.revokeInvite(await ctx.principal(), ctx.params.id);
      await audit(ctx, "member.invite.revoke", { kind: "invite", id: ctx.params.id });
      return new Response(null, { status: 204 });
    },
  }),
  endpoint({
    method: "PATCH",
    path: "/api/v1/members/{userId}",
    operationId: "updateMember",
    summary: "Change a member's role (admins); it applies from their next request. The project's last admin cannot be demoted (409).",
    auth: MEMBERS,
    request: { body: updateMemberRequest, required: true },
    responses: { "200": { description: "The member.", body: memberSchema } },
    errors: ["validation_failed", "unauthorized", "forbidden", "not_found", "conflict", "unsupported_media_type"],
    handler: async (ctx) => {
      const caller = await ctx.principal();
      const { role } = await ctx.body(updateMemberRequest);
      const { members } = ctx.runtime.services.people;
      const before = (await members.list(caller)).find((m) => m.userId === ctx.params.userId);
      const after = await members.setRole(caller, ctx.params.userId, role);
      await audit(ctx, "member.role", { kind: "user", id: after.userId }, changesBetween({ email: after.email, role: before?.role }, { email: after.email, role: after.role }));
      const { keyId: _key, ...view } = after;
      return reply(memberSchema, view);
    },
  }),
  endpoint({
    method: "DELETE",
    path: "/api/v1/members/{userId}",
    operationId: "removeMember",
    summary: "Remove a member from this project (admins): their personal key here is revoked and their sessions acting as it end. The last admin cannot be removed (409).",
    auth: MEMBERS,
    responses: { "204": { description: "Removed." } },
    errors: ["unauthorized", "forbidden", "not_found", "conflict"],
    handler: async (ctx) => {
      const removed = await ctx.runtime.services.people.members.remove(await ctx.principal(), ctx.params.userId);
      await audit(ctx, "member.remove", { kind: "user", id: removed.userId }, changesBetween({ email: removed.email, role: removed.role }, null));
      return new Response(null, { status: 204 });
    },
  }),
];
