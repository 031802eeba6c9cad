import "server-only";
import { createHash, randomBytes } from "node:crypto";
import type { Role } from "../config/schema";
import { GenserveError } from "../errors";
import { newInviteId } from "../ids";
import { newKey, type Principal } from "../keys/api-keys";
import type { ApiKeyRecord, InviteRecord, MemberRecord, MembershipRecord, ProjectRecord, Store, UserRecord } from "../store/store-types";
import type { Accounts } from "./accounts";
import { normaliseEmail } from "./accounts";

/** An invitation link works this long. */
export const INVITE_TTL_MS = 7 * 24 * 60 * 60_000;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const EMAIL = /^[^\s@]+@[^\s@]+$/;

const tokenHash = (token: string) => createHash("sha256").update(token, "utf8").digest("hex");

const invalidInvite = () =>
  new GenserveError("sign_in_failed", { detail: "This invitation is not valid: it was used already, revoked, has expired, or was never issued. Ask the project's admin for a new one." });

/** An invitation looked up by its link, with the project it is to. */
export interface InviteView {
  invite: InviteRecord;
  project: ProjectRecord;
}

/**
 * The people of a project and how they join it. A membership IS a person's personal key in the
 * project (lib/keys/api-keys.ts): its role is their role there, revoking it removes them (their
 * sessions acting as it end: Sessions.resolve refuses a revoked key). Every project keeps at least
 * one admin person: the last one is neither demoted nor removed.
 */
export class Members {
  constructor(
    private readonly store: Store,
    private readonly accounts: Accounts,
    private readonly publicUrl: string,
  ) {}

  list(caller: Principal): Promise<MemberRecord[]> {
    return this.store.members.list(caller.projectId);
  }

  pendingInvites(caller: Principal, now = new Date()): Promise<InviteRecord[]> {
    return this.store.members.pendingInvites(caller.projectId, now.toISOString());
  }

  /** An invitation to the caller's project; its link (with the token, shown this once). */
  async invite(caller: Principal, input: { email: string; role: Role }, createdBy: string | null, now = new Date()): Promise<{ invite: InviteRecord; url: string }> {
    const email = normaliseEmail(input.email);
    if (!EMAIL.test(email) || email.length > 320) throw new GenserveError("validation_failed", { detail: `"${input.email}" is not an email address.` });
    const token = randomBytes(32).toString("base64url");
    const invite: InviteRecord = {
      id: newInviteId(),
      tokenHash: tokenHash(token),
      projectId: caller.projectId,
      email,
      role: input.role,
      createdBy,
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + INVITE_TTL_MS).toISOString(),
      acceptedAt: null,
      revokedAt: null,
    };
    await this.store.members.insertInvite(invite);
    return { invite, url: `${this.publicUrl.replace(/\/$/, "")}/auth/invite/${token}` };
  }

  async revokeInvite(caller: Principal, id: string, now = new Date()): Promise<void> {
    if (!(await this.store.members.revokeInvite(caller.projectId, id, now.toISOString()))) throw new GenserveError("not_found", { detail: `No pending invitation "${id}" in this project.` });
  }

  /** Changes a member's role in the caller's project (from the next request on). */
  async setRole(caller: Principal, userId: string, role: Role, now = new Date()): Promise<MemberRecord> {
    const before = await this.member(caller, userId);
    this.settle(await this.store.members.change(caller.projectId, userId, role, now.toISOString()), userId, "demoted");
    return { ...before, role };
  }

  /** Removes a member from the caller's project: their personal key there is revoked. */
  async remove(caller: Principal, userId: string, now = new Date()): Promise<MemberRecord> {
    const before = await this.member(caller, userId);
    this.settle(await this.store.members.change(caller.projectId, userId, null, now.toISOString()), userId, "removed");
    return before;
  }

  /** The projects a person belongs to. */
  projectsOf(userId: string): Promise<MembershipRecord[]> {
    return this.store.members.memberships(userId);
  }

  /** The person's key in the project `slug`; 404 when they are not a member of it. */
  async keyFor(userId: string, slug: string): Promise<ApiKeyRecord> {
    const project = await this.store.projects.bySlug(slug);
    const key = project ? await this.store.members.keyIn(project.id, userId) : null;
    if (!key) throw new GenserveError("not_found", { detail: `You are not a member of a project "${slug}".` });
    return key;
  }

  /** What an invitation link offers (its page); `sign_in_failed` when it no longer works. */
  async view(token: string, now = new Date()): Promise<InviteView> {
    const invite = TOKEN.test(token) ? await this.store.members.inviteByToken(tokenHash(token)) : null;
    if (!invite || invite.acceptedAt !== null || invite.revokedAt !== null || invite.expiresAt <= now.toISOString()) throw invalidInvite();
    const project = await this.store.projects.get(invite.projectId);
    if (!project) throw invalidInvite();
    return { invite, project };
  }

  /**
   * Uses an invitation up: the person with its email (made when there is none) gets a personal key
   * in the project with its role. An existing person must be signed in as themselves
   * (`signedInAs`): an invitation is not a way into someone else's account.
   */
  async accept(token: string, signedInAs: string | null, now = new Date()): Promise<{ user: UserRecord; key: ApiKeyRecord; invite: InviteRecord; created: boolean }> {
    const { invite } = await this.view(token, now);
    const existing = await this.accounts.byEmail(invite.email);
    if (existing && existing.id !== signedInAs) {
      throw new GenserveError("sign_in_failed", { detail: `This invitation is for ${invite.email}, who has an account: sign in as ${invite.email} first, then open the link again.` });
    }
    const accepted = await this.store.members.acceptInvite(invite.tokenHash, now.toISOString());
    if (!accepted) throw invalidInvite();
    let created = false;
    let user = existing;
    if (!user) {
      user = await this.accounts.create({ email: accepted.email, role: accepted.role, projectId: accepted.projectId }, now);
      created = true;
    }
    if (user.disabledAt !== null) throw invalidInvite();
    const { record } = newKey({ name: user.email.slice(0, 200), role: accepted.role, projectId: accepted.projectId, now });
    const key = await this.store.members.join(user.id, record);
    return { user, key, invite: accepted, created };
  }

  private async member(caller: Principal, userId: string): Promise<MemberRecord> {
    const found = (await this.store.members.list(caller.projectId)).find((m) => m.userId === userId);
    if (!found) throw notMember(userId);
    return found;
  }

  private settle(outcome: "ok" | "not_member" | "last_admin", userId: string, what: string): void {
    if (outcome === "not_member") throw notMember(userId);
    if (outcome === "last_admin") throw new GenserveError("conflict", { detail: `The project's last admin cannot be ${what}: make another member admin first.` });
  }
}

const notMember = (userId: string) => new GenserveError("not_found", { detail: `No member "${userId}" in this project.` });
