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
  /** Gives every personal key of the person (their memberships) this role. */
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
