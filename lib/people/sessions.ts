import "server-only";
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { GenserveError } from "../errors";
import { principalOf, type Principal } from "../keys/api-keys";
import type { SessionRecord, Store } from "../store/store-types";

/** The cookie of a signed-in browser. */
export const SESSION_COOKIE = "genserve_session";
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
// last_seen_at is advisory, as a key's last_used_at: at most one write a minute per session.
const TOUCH_INTERVAL_MS = 60_000;

export const sessionId = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex");

/** What a browser tells about itself, kept with its session for the person to recognise it. */
export interface ClientInfo {
  ip: string | null;
  userAgent: string | null;
}

export interface StartedSession {
  /** The cookie's value: shown to the browser once, stored only hashed. */
  token: string;
  csrfToken: string;
  record: SessionRecord;
}

export interface ResolvedSession {
  session: SessionRecord;
  principal: Principal;
}

const expired = () => new GenserveError("unauthorized", { detail: "Your session has ended; sign in again." });

/**
 * Server-side sessions: a random 256-bit token in an HttpOnly cookie, stored as its SHA-256, with
 * idle and absolute expiry, revocable one at a time or all of a person's, valid on every replica
 * (the database holds them). Every sign-in starts a new one (no fixation).
 */
export class Sessions {
  constructor(
    private readonly store: Store,
    private readonly settings: { idleMs: number; maxMs: number },
  ) {}

  async start(who: { userId: string | null; keyId: string }, client: ClientInfo, now = new Date()): Promise<StartedSession> {
    const token = randomBytes(32).toString("base64url");
    const csrfToken = randomBytes(32).toString("base64url");
    const expiresAt = new Date(now.getTime() + this.settings.maxMs).toISOString();
    const idle = new Date(Math.min(now.getTime() + this.settings.idleMs, Date.parse(expiresAt))).toISOString();
    const record: SessionRecord = {
      id: sessionId(token),
      userId: who.userId,
      keyId: who.keyId,
      csrfToken,
      createdAt: now.toISOString(),
      lastSeenAt: now.toISOString(),
      idleExpiresAt: idle,
      expiresAt,
      revokedAt: null,
      ip: client.ip?.slice(0, 64) ?? null,
      userAgent: client.userAgent?.slice(0, 200) ?? null,
    };
    await this.store.people.insertSession(record);
    return { token, csrfToken, record };
  }

  /** The live session of a cookie's token and who it acts as; 401 when it is unknown, ended, revoked, or its key or person is gone. */
  async resolve(token: string, now = new Date()): Promise<ResolvedSession> {
    if (!TOKEN_PATTERN.test(token)) throw expired();
    const id = sessionId(token);
    const session = await this.store.people.session(id);
    if (!session || !timingSafeEqual(Buffer.from(session.id, "hex"), Buffer.from(id, "hex"))) throw expired();
    const at = now.toISOString();
    if (session.revokedAt !== null || at >= session.idleExpiresAt || at >= session.expiresAt) throw expired();
    const key = await this.store.keys.get(session.keyId);
    if (!key || key.revokedAt !== null) throw expired();
    if (session.userId !== null) {
      const user = await this.store.people.user(session.userId);
      if (!user || user.disabledAt !== null) throw expired();
    }
    if (now.getTime() - Date.parse(session.lastSeenAt) > TOUCH_INTERVAL_MS) {
      await this.store.people.touchSession(id, at, new Date(now.getTime() + this.settings.idleMs).toISOString()).catch(() => undefined);
    }
    return { session, principal: principalOf(key, "session", session.userId ?? undefined) };
  }

  /** Makes the session act as another key of its person (switching project); 401 when it has ended meanwhile. */
  async switchKey(session: SessionRecord, keyId: string): Promise<void> {
    if (!(await this.store.people.setSessionKey(session.id, keyId))) throw expired();
  }

  /** Signs this browser out; nothing to do for a token that is not a live session. */
  async end(token: string, now = new Date()): Promise<void> {
    if (TOKEN_PATTERN.test(token)) await this.store.people.revokeSession(sessionId(token), now.toISOString());
  }

  /** Signs out every browser of the session's person (or, for a key's session, every session of that key). */
  async endEverywhere(session: SessionRecord, now = new Date()): Promise<number> {
    const of = session.userId !== null ? { userId: session.userId } : { keyId: session.keyId };
    return this.store.people.revokeSessions(of, now.toISOString());
  }

  /** The session cookie for `token`; `Secure` when the site is served over https. */
  cookie(token: string, secure: boolean): string {
    return serializeCookie(SESSION_COOKIE, token, { maxAgeSeconds: Math.floor(this.settings.maxMs / 1000), secure });
  }
}

/**
 * The name a cookie goes by: `__Host-<base>` when it is Secure (the browser then takes it only over
 * https, for this host alone — no Domain, Path=/ — so a sibling subdomain cannot set or shadow it),
 * the base name on plain http (where browsers refuse the prefix).
 */
export const cookieName = (base: string, secure: boolean): string => (secure ? `__Host-${base}` : base);

/** A Set-Cookie value of the cookie `base` (named by `cookieName`): HttpOnly, SameSite=Lax, Path=/, no Domain; Max-Age 0 clears it. */
export function serializeCookie(base: string, value: string, options: { maxAgeSeconds: number; secure: boolean }): string {
  return [`${cookieName(base, options.secure)}=${value}`, "Path=/", `Max-Age=${options.maxAgeSeconds}`, "HttpOnly", "SameSite=Lax", ...(options.secure ? ["Secure"] : [])].join("; ");
}

/** One cookie's value from a Cookie header (the first of that name), or null. */
export function readCookie(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}
