import "server-only";
import { GenserveError, isGenserveError } from "../errors";
import type { SqlRunner } from "./runner";
import type { Store } from "./store-types";

/**
 * A full disk, as each backend reports it: SQLite's SQLITE_FULL and the I/O errors of writing or
 * syncing (how a disk that ran out shows once a write was already accepted, or when the WAL's
 * shared-memory index cannot grow), the system's ENOSPC / EDQUOT, and PostgreSQL's disk_full
 * (SQLSTATE 53100). Reading errors are not among them: they stay `internal`.
 */
export function isStorageFull(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return false;
  return code === "SQLITE_FULL" || code === "ENOSPC" || code === "EDQUOT" || code === "53100" || /^SQLITE_IOERR_(WRITE|FSYNC|DIR_FSYNC|TRUNCATE|SHMSIZE|SHMMAP)$/.test(code);
}

/** How long a client is asked to wait: freeing a disk takes an operator, not a moment. */
export const STORAGE_FULL_RETRY_AFTER_SECONDS = 30;

export function storageFull(cause?: unknown): GenserveError {
  return new GenserveError("storage_full", {
    detail: "The data store cannot take writes right now: its disk is full (or failing to write). Retry once space is freed.",
    headers: { "Retry-After": String(STORAGE_FULL_RETRY_AFTER_SECONDS) },
    retryAfterMs: STORAGE_FULL_RETRY_AFTER_SECONDS * 1_000,
    cause,
  });
}

/** Readiness's write: one row rewritten, as large as a few runs' writes, so a disk that took it takes ordinary writes. */
const PROBE = "INSERT INTO storage_probe (id, at, pad) VALUES (1, $1, $2) ON CONFLICT (id) DO UPDATE SET at = excluded.at, pad = excluded.pad";
const PAD = "0".repeat(64 * 1024);

export function probeWrite(db: SqlRunner): () => Promise<void> {
  return async () => void (await db.run(PROBE, [new Date().toISOString(), PAD]));
}

type Method = (...args: unknown[]) => unknown;

/**
 * The store as callers see it: every failure of a full disk, from any operation, becomes 503
 * `storage_full` with `Retry-After` (never a 500), and the store remembers that writes failed.
 * While it does, `ping` — what `/readyz` asks — tries a write of its own (`probe`) and fails until
 * one succeeds, so a balancer stops sending work here until space is freed. Reads are untouched:
 * they go on working on a full disk.
 */
export function guardStorage(store: Store, probe: () => Promise<void>): Store {
  let writesFailing = false;
  const mapped = (error: unknown): unknown => {
    if (isGenserveError(error) || !isStorageFull(error)) return error;
    writesFailing = true;
    return storageFull(error);
  };
  const guard = (fn: Method, self: unknown): Method =>
    function guarded(...args) {
      let result: unknown;
      try {
        result = fn.apply(self, args);
      } catch (error) {
        throw mapped(error);
      }
      return result instanceof Promise ? result.catch((error: unknown) => Promise.reject(mapped(error))) : result;
    };
  const guarded: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(store)) {
    if (typeof value === "function") guarded[name] = guard(value as Method, store);
    else if (value !== null && typeof value === "object") {
      guarded[name] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, typeof v === "function" ? guard(v as Method, value) : v]));
    } else guarded[name] = value;
  }
  const ping = guarded.ping as Store["ping"];
  guarded.ping = async () => {
    await ping();
    if (!writesFailing) return;
    try {
      await probe();
    } catch (error) {
      throw mapped(error);
    }
    writesFailing = false;
  };
  return guarded as unknown as Store;
}
