/** People and their sessions: the records of `Store["people"]` (lib/people/ uses them). */

import "server-only";
import type { Role } from "../domain/roles";
import type { ApiKeyRecord } from "./key-types";

export interface UserRecord {
  id: string;
  /** Lower-cased; unique. */
  email: string;
  name: string | null;
  /** scrypt, in the self-describing form lib/people/passwords.ts writes; null: no password sign-in. */
  passwordHash: string | null;
  createdAt: string;
  disabledAt: string | null;
}

/**
 * A signed-in browser. `id` is the SHA-256 of the cookie's token (the token is never stored); the
 * session acts as `keyId` (a person's personal key, or the key exchanged for it), so switching what
 * it acts as is one update of that column.
 */
export interface SessionRecord {
  id: string;
  userId: string | null;
  keyId: string;
  /** Sent back in X-CSRF-Token on cookie-authenticated changes (given by GET /api/v1/session). */
  csrfToken: string;
  createdAt: string;
  lastSeenAt: string;
  /** Idle expiry, pushed forward when the session is seen. */
  idleExpiresAt: string;
  /** Absolute expiry: never moves. */
  expiresAt: string;
  revokedAt: string | null;
  ip: string | null;
  userAgent: string | null;
}

/** An OpenID Connect sign-in under way: kept by its state's hash until the provider sends the browser back. */
export interface PendingLogin {
  id: string;
  verifier: string;
  nonce: string;
  returnTo: string;
  createdAt: string;
  expiresAt: string;
}

export interface PeopleStore {
  /** Stores a person and the personal key they act through, together; false when the email is taken. */
  createUser(user: UserRecord, personalKey: ApiKeyRecord): Promise<boolean>;
  user(id: string): Promise<UserRecord | null>;
  userByEmail(email: string): Promise<UserRecord | null>;
  userByIdentity(issuer: string, subject: string): Promise<UserRecord | null>;
  /** Links an identity provider's subject to a person (once: an existing link stays). */
  linkIdentity(issuer: string, subject: string, userId: string, at: string): Promise<void>;
  setPassword(userId: string, hash: string | null): Promise<boolean>;
  /** Marks the person disabled (once: the first time stays) and revokes their live sessions; false when there is no such person. */
  disableUser(userId: string, at: string): Promise<boolean>;
  /** The person's newest personal key that is not revoked. */
  personalKey(userId: string): Promise<ApiKeyRecord | null>;
  /** Gives the person's personal key in the default project this role (an identity provider's group mapping); other projects' roles stay. */
  setRole(userId: string, role: Role): Promise<void>;

  insertSignInToken(token: { hash: string; userId: string; purpose: string; createdAt: string; expiresAt: string }): Promise<void>;
  /** Uses a sign-in token once: its person, or null when it is unknown, used, expired or for another purpose. */
  useSignInToken(hash: string, purpose: string, at: string): Promise<string | null>;

  insertSession(session: SessionRecord): Promise<void>;
  session(id: string): Promise<SessionRecord | null>;
  /** Records that the session was seen: its idle expiry moves to `idleExpiresAt` (never past its absolute one). */
  touchSession(id: string, at: string, idleExpiresAt: string): Promise<void>;
  /** Makes the session act as another key (switching project, say). */
  setSessionKey(id: string, keyId: string): Promise<boolean>;
  revokeSession(id: string, at: string): Promise<boolean>;
  /** Revokes every live session of a person, or of a key (sessions without a person); how many. */
  revokeSessions(of: { userId: string } | { keyId: string }, at: string): Promise<number>;

  /** Keeps a pending sign-in (expired ones are forgotten first); false, and nothing kept, when `max` are under way already. */
  savePendingLogin(login: PendingLogin, max: number): Promise<boolean>;
  /** Takes a pending sign-in once (it is deleted); null when unknown or expired. */
  takePendingLogin(id: string, at: string): Promise<PendingLogin | null>;

  /**
   * Counts a password sign-in attempt of `subject` (an email, an address) in the window starting at
   * `windowStart`, before the password is checked, atomically: the count now, this attempt included.
   */
  countAttempt(subject: string, windowStart: string): Promise<number>;
  /** Takes back one counted attempt (one refused unchecked, or that succeeded), or `all` of the window's (a success for that email). */
  uncountAttempt(subject: string, windowStart: string, all: boolean): Promise<void>;
  attempts(subject: string, windowStart: string): Promise<number>;

  /** Forgets sessions, tokens and pending sign-ins that ended before `before`, and old failure windows. */
  sweep(before: string): Promise<void>;
}

/** A person in a project: their live personal key there (their membership). */
export interface MemberRecord {
  userId: string;
  email: string;
  name: string | null;
  role: Role;
  keyId: string;
  /** When their personal key in the project was made (they joined). */
  since: string;
  /** The latest of their key's last use and their sessions' last sight in the project; null: never. */
  lastActiveAt: string | null;
}

/** A project a person belongs to (one of their live personal keys). */
export interface MembershipRecord {
  keyId: string;
  projectId: string;
  slug: string;
  name: string;
  role: Role;
}

/** An invitation to a project: its token is given once and stored as its SHA-256. */
export interface InviteRecord {
  id: string;
  tokenHash: string;
  projectId: string;
  email: string;
  role: Role;
  /** Who invited (the audit actor's id: a person or a key). */
  createdBy: string | null;
  createdAt: string;
  expiresAt: string;
  acceptedAt: string | null;
  revokedAt: string | null;
}

/** The people of projects (their personal keys) and invitations (lib/people/members.ts). */
export interface MembersStore {
  /** The people with a live personal key in the project, by email. */
  list(projectId: string): Promise<MemberRecord[]>;
  /** The person's live personal key in the project, or null. */
  keyIn(projectId: string, userId: string): Promise<ApiKeyRecord | null>;
  /** The projects the person belongs to (their live personal keys), by project name. */
  memberships(userId: string): Promise<MembershipRecord[]>;
  /**
   * Gives the person `key` (made for the project) unless they have a live personal key there
   * already; the key they act through there either way.
   */
  join(userId: string, key: ApiKeyRecord): Promise<ApiKeyRecord>;
  /**
   * Changes the member's role (`role`) or revokes their key (`null`) in one transaction that
   * refuses to leave the project without an admin person: "last_admin" then, "not_member" when
   * they have no live key there; "ok" otherwise.
   */
  change(projectId: string, userId: string, role: Role | null, at: string): Promise<"ok" | "not_member" | "last_admin">;

  insertInvite(invite: InviteRecord): Promise<void>;
  /** Invitations not accepted, revoked or expired at `at`, newest first. */
  pendingInvites(projectId: string, at: string): Promise<InviteRecord[]>;
  /** Revokes a pending invitation of the project; false when there is none by that id. */
  revokeInvite(projectId: string, id: string, at: string): Promise<boolean>;
  /** Uses an invitation once (one statement: of two redeeming at once, one gets it); null when unknown, used, revoked or expired. */
  acceptInvite(tokenHash: string, at: string): Promise<InviteRecord | null>;
  /** The invitation of a token as it stands (to show its page), or null. */
  inviteByToken(tokenHash: string): Promise<InviteRecord | null>;
}
