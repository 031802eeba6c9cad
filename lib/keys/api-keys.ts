import "server-only";
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { NO_LIMITS, type KeyLimits } from "../domain/key-limits";
import { DEFAULT_PROJECT_ID, type Role } from "../domain/roles";
import { GenserveError } from "../errors";
import { newKeyId, newWebhookSecret } from "../ids";
import type { ApiKeyRecord, Store } from "../store/store-types";

export const KEY_PREFIX = "gs_";
const KEY_PATTERN = /^gs_[A-Za-z0-9_-]{43}$/;

/** SHA-256 is the right hash for 256-bit random keys: no dictionary to slow down. */
export const hashKey = (key: string): string => createHash("sha256").update(key, "utf8").digest("hex");

export interface CreatedKey {
  record: ApiKeyRecord;
  /** The key itself: shown once, never stored. */
  key: string;
}

/** The first admin key of an empty store; null when any key was ever created (by this process or another). */
export async function createFirstKey(store: Store): Promise<CreatedKey | null> {
  const created = newKey({ name: "admin", role: "admin" });
  return (await store.keys.insertFirst(created.record)) ? created : null;
}

/** What a new key is: its name, its role in its project (`admin: true` is role admin, for callers from before roles), its limits. */
export interface NewKeyOptions {
  name: string;
  role?: Role;
  /** Kept for callers from before roles: true is role admin, false role editor (when no role is given). */
  admin?: boolean;
  /** The default project when none is given. */
  projectId?: string;
  limits?: KeyLimits;
  now?: Date;
}

export async function createKey(store: Store, options: NewKeyOptions): Promise<CreatedKey> {
  const created = newKey(options);
  await store.keys.insert(created.record);
  return created;
}

/** A key record and its secret, not stored yet (a personal key is stored with its person, and its secret dropped). */
export function newKey(options: NewKeyOptions): CreatedKey {
  const name = options.name.trim();
  if (name.length === 0 || name.length > 200) throw new Error("key name must be 1-200 characters");
  const key = KEY_PREFIX + randomBytes(32).toString("base64url");
  const record: ApiKeyRecord = {
    id: newKeyId(),
    name,
    hash: hashKey(key),
    prefix: key.slice(0, 10),
    ...roleOf(options),
    projectId: options.projectId ?? DEFAULT_PROJECT_ID,
    createdAt: (options.now ?? new Date()).toISOString(),
    lastUsedAt: null,
    revokedAt: null,
    webhookSecret: newWebhookSecret(),
    limits: options.limits ?? NO_LIMITS,
  };
  return { record, key };
}

const roleOf = (options: NewKeyOptions): { role: Role; admin: boolean } => {
  const role: Role = options.role ?? (options.admin ? "admin" : "editor");
  return { role, admin: role === "admin" };
};

export interface Principal {
  keyId: string;
  name: string;
  /** role === "admin" (kept for code from before roles). */
  admin: boolean;
  /** What the key may do in its project (lib/domain/roles.ts). */
  role: Role;
  /** The one project the key sees. */
  projectId: string;
  limits: KeyLimits;
  /** How the caller proved who it is: the Api-Key header, or a browser's session cookie. */
  via: "key" | "session";
  /** The person signed in (sessions of people; a key exchanged for a session has none). */
  userId?: string;
}

/** The principal a stored key acts as (`via`: how it was presented; `userId`: a personal key's person). */
export const principalOf = (record: ApiKeyRecord, via: Principal["via"] = "key", userId?: string): Principal => ({
  keyId: record.id,
  name: record.name,
  admin: record.role === "admin",
  role: record.role,
  projectId: record.projectId,
  limits: record.limits,
  via,
  ...(userId ? { userId } : {}),
});

// last_used_at is advisory; writing it on every request would turn each read into a write.
const TOUCH_INTERVAL_MS = 60_000;

/** Resolves the `Api-Key` header to a principal, or throws 401. Revocation takes effect at once. */
export async function authenticate(store: Store, header: string | null, now = new Date()): Promise<Principal> {
  if (header === null || header.trim() === "") {
    throw new GenserveError("unauthorized", { detail: "Send your API key in the Api-Key header." });
  }
  const presented = header.trim();
  if (!KEY_PATTERN.test(presented)) throw new GenserveError("unauthorized", { detail: "The API key is not valid." });
  const hash = hashKey(presented);
  const record = await store.keys.findByHash(hash);
  // The lookup is by hash; the constant-time comparison guards against a store that matched loosely.
  if (!record || !timingSafeEqual(Buffer.from(record.hash, "hex"), Buffer.from(hash, "hex")) || record.revokedAt !== null) {
    throw new GenserveError("unauthorized", { detail: "The API key is not valid or has been revoked." });
  }
  if (record.lastUsedAt === null || now.getTime() - Date.parse(record.lastUsedAt) > TOUCH_INTERVAL_MS) {
    // Bookkeeping, best effort: a request (a read above all) must not fail because this write did
    // (a full disk); the store remembers the failure for readiness, and a later request touches again.
    await store.keys.touch(record.id, now.toISOString()).catch(() => undefined);
  }
  return principalOf(record, "key");
}
