import "server-only";
import { createHash, randomBytes } from "node:crypto";
import type { AuthSettings, Role } from "../config/schema";
import { GenserveError } from "../errors";
import { newUserId } from "../ids";
import { newKey } from "../keys/api-keys";
import type { ApiKeyRecord, Store, UserRecord } from "../store/store-types";
import { decoyHash, hashPassword, PASSWORD_MAX, PASSWORD_MIN, verifyPassword } from "./passwords";

/** A one-time sign-in link lasts this long. */
export const LINK_TTL_MS = 15 * 60_000;
const LINK_PURPOSE = "link";
const EMAIL = /^[^\s@]+@[^\s@]+$/;

const tokenHash = (token: string) => createHash("sha256").update(token, "utf8").digest("hex");

export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

/**
 * People and how they sign in without an identity provider. A person acts through a personal key
 * (created with them, its secret never shown): the runs, limits, budgets and ownership of keys apply
 * to people unchanged, their role (viewer, editor, admin) the key's.
 */
export class Accounts {
  constructor(
    private readonly store: Store,
    private readonly settings: Pick<AuthSettings, "passwordAttemptsPerEmail" | "passwordAttemptsPerAddress" | "passwordWindowMs">,
  ) {}

  /** Creates a person and their personal key (in `projectId`, else the default project); `conflict` when the email is taken. */
  async create(input: { email: string; name?: string | null; role: Role; projectId?: string }, now = new Date()): Promise<UserRecord> {
    const email = normaliseEmail(input.email);
    if (!EMAIL.test(email) || email.length > 320) throw new GenserveError("validation_failed", { detail: `"${input.email}" is not an email address.` });
    const user: UserRecord = { id: newUserId(), email, name: input.name?.trim() || null, passwordHash: null, createdAt: now.toISOString(), disabledAt: null };
    const { record } = newKey({ name: email.slice(0, 200), role: input.role, projectId: input.projectId, now });
    if (!(await this.store.people.createUser(user, record))) throw new GenserveError("conflict", { detail: `A person with the email ${email} exists already.` });
    return user;
  }

  async get(id: string): Promise<UserRecord | null> {
    return this.store.people.user(id);
  }

  /** The personal key a person acts through; `sign_in_failed` when it was revoked (their access removed). */
  async personalKey(userId: string): Promise<ApiKeyRecord> {
    const key = await this.store.people.personalKey(userId);
    if (!key) throw new GenserveError("sign_in_failed", { detail: "This person's access has been removed (their key is revoked)." });
    return key;
  }

  async byEmail(email: string): Promise<UserRecord | null> {
    return this.store.people.userByEmail(normaliseEmail(email));
  }

  /** Gives the person this role in the default project (an identity provider's group mapping; other projects' roles are their admins'). */
  async setRole(userId: string, role: Role): Promise<void> {
    await this.store.people.setRole(userId, role);
  }

  /** A one-time sign-in link's token (15 minutes, single use; stored hashed). */
  async signInToken(userId: string, now = new Date()): Promise<string> {
    const token = randomBytes(32).toString("base64url");
    await this.store.people.insertSignInToken({ hash: tokenHash(token), userId, purpose: LINK_PURPOSE, createdAt: now.toISOString(), expiresAt: new Date(now.getTime() + LINK_TTL_MS).toISOString() });
    return token;
  }

  /** The person a sign-in link signs in, using it up; `sign_in_failed` when it is unknown, used or expired. */
  async redeem(token: string, now = new Date()): Promise<UserRecord> {
    const userId = /^[A-Za-z0-9_-]{43}$/.test(token) ? await this.store.people.useSignInToken(tokenHash(token), LINK_PURPOSE, now.toISOString()) : null;
    const user = userId ? await this.store.people.user(userId) : null;
    if (!user || user.disabledAt !== null) throw new GenserveError("sign_in_failed", { detail: "This sign-in link is not valid: it was used already, has expired, or was never issued. Ask for a new one." });
    return user;
  }

  async setPassword(email: string, password: string): Promise<void> {
    if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) {
      throw new GenserveError("validation_failed", { detail: `A password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.` });
    }
    const user = await this.byEmail(email);
    if (!user) throw new GenserveError("not_found", { detail: `No person has the email ${normaliseEmail(email)}.` });
    await this.store.people.setPassword(user.id, await hashPassword(password));
    // Whoever knew the old password is signed out (there is no current session here: the CLI sets it).
    await this.store.people.revokeSessions({ userId: user.id }, new Date().toISOString());
  }

  /** Removes a person's access: no sign-in of any kind, every session ended. Their keys and runs stay. */
  async disable(email: string, now = new Date()): Promise<UserRecord> {
    const user = await this.byEmail(email);
    if (!user) throw new GenserveError("not_found", { detail: `No person has the email ${normaliseEmail(email)}.` });
    await this.store.people.disableUser(user.id, now.toISOString());
    return user;
  }

  /**
   * Signs in with an email and a password. Every attempt is counted per email and per client address
   * in the store (every replica sees them) BEFORE the password is checked, in one statement each, so
   * parallel attempts cannot all slip under the limit; past either limit the attempt is refused
   * unchecked (and not counted), 429 until the window ends. A success clears its email's count and
   * does not count against its address. The answer never says which part was wrong, and an unknown
   * email costs the same hash as a known one.
   */
  async passwordSignIn(email: string, password: string, ip: string | null, now = new Date()): Promise<UserRecord> {
    const { passwordWindowMs: windowMs } = this.settings;
    const start = Math.floor(now.getTime() / windowMs) * windowMs;
    const windowStart = new Date(start).toISOString();
    const emailSubject = `email:${normaliseEmail(email).slice(0, 320)}`;
    const subjects = [
      { subject: emailSubject, limit: this.settings.passwordAttemptsPerEmail },
      { subject: `ip:${ip ?? "unknown"}`, limit: this.settings.passwordAttemptsPerAddress },
    ];
    const counts = await Promise.all(subjects.map(({ subject }) => this.store.people.countAttempt(subject, windowStart)));
    if (subjects.some(({ limit }, i) => counts[i]! > limit)) {
      for (const { subject } of subjects) await this.store.people.uncountAttempt(subject, windowStart, false);
      const retryAfter = Math.max(1, Math.ceil((start + windowMs - now.getTime()) / 1000));
      throw new GenserveError("rate_limited", { detail: "Too many failed sign-ins; try again later.", headers: { "Retry-After": String(retryAfter) } });
    }
    const user = await this.byEmail(email);
    const ok = await verifyPassword(password.slice(0, PASSWORD_MAX), user?.passwordHash ?? (await decoyHash()));
    if (!ok || !user?.passwordHash || user.disabledAt !== null) throw new GenserveError("unauthorized", { detail: "The email or password is not right." });
    for (const { subject } of subjects) await this.store.people.uncountAttempt(subject, windowStart, subject === emailSubject);
    return user;
  }
}
