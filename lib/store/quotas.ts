import "server-only";
import { GenserveError, type QuotaResource } from "../errors";
import { all, run, type SqlRunner, type StoreRunner } from "./runner";

/**
 * Per-key storage quotas: how many inboxes, share links, threads and suites a key may hold
 * (`limits.<resource>PerKey`). A capped write (`cappedWrite`: inboxes, share links, `POST /threads`)
 * counts the key's rows and inserts in one transaction, serialised per key and resource, so
 * requests racing at the cap never pass it. A thread a run starts and a suite are checked before
 * they are written (`quotaCount`, `assertRoom`): requests racing at the cap can pass it by as many
 * as are in flight (a run's thread is created after the run is admitted, where a refusal would
 * strand the run).
 */
export interface Cap {
  resource: QuotaResource;
  keyId: string;
  limit: number;
  /** Now: share links that expired by then no longer count. */
  at: string;
  /** The row being written again (a thread id that exists, a suite put again): not counted. */
  except?: string;
}

const ROWS: Record<QuotaResource, { table: string; id: string }> = {
  inboxes: { table: "inboxes", id: "id" },
  shares: { table: "shares", id: "id" },
  threads: { table: "threads", id: "id" },
  suites: { table: "suites", id: "slug" },
};

/** What counts against a key's cap: its rows; of share links only those that still work. */
function counted(resource: QuotaResource, keyId: string, at: string, except?: string): { sql: string; params: unknown[] } {
  const params: unknown[] = [keyId];
  let sql = `SELECT COUNT(*) FROM ${ROWS[resource].table} WHERE key_id = $1`;
  if (resource === "shares") sql += ` AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $${params.push(at)})`;
  if (except !== undefined) sql += ` AND ${ROWS[resource].id} <> $${params.push(except)}`;
  return { sql, params };
}

const WHAT: Record<QuotaResource, { noun: string; free: string }> = {
  inboxes: { noun: "built-in inboxes", free: "reuse one of them (an inbox keeps its newest deliveries)" },
  shares: { noun: "share links that still work", free: "revoke one (DELETE /api/v1/shares/{id}) or wait for one to expire" },
  threads: { noun: "threads", free: "delete one (DELETE /api/v1/threads/{id})" },
  suites: { noun: "test suites", free: "delete one (DELETE /api/v1/suites/{slug})" },
};

export function quotaExceeded(resource: QuotaResource, limit: number, used: number): GenserveError {
  return new GenserveError("quota_exceeded", {
    detail: `This key holds ${used} ${WHAT[resource].noun}, as many as it may (limits.${resource}PerKey: ${limit}); ${WHAT[resource].free}.`,
    extensions: { quota: { resource, limit, used } },
  });
}

/** Refuses with `quota_exceeded` when `used` leaves no room under `cap`. */
export function assertRoom(cap: Pick<Cap, "resource" | "limit">, used: number): void {
  if (used >= cap.limit) throw quotaExceeded(cap.resource, cap.limit, used);
}

/**
 * Runs `write` (an INSERT returning no rows) only while the key holds fewer than its cap, the count
 * and the insert in one transaction serialised per key and resource; without a cap, as it is.
 * Returns the rows it inserted.
 */
export async function cappedWrite(db: StoreRunner, cap: Cap | undefined, write: { sql: string; params: unknown[] }): Promise<number> {
  if (!cap) return db.run(write.sql, write.params);
  const { sql, params } = counted(cap.resource, cap.keyId, cap.at, cap.except);
  return db.transact(
    function* () {
      const [row] = yield* all<{ n: number | string }>(sql.replace("COUNT(*)", "COUNT(*) AS n"), params);
      assertRoom(cap, Number(row?.n ?? 0));
      return yield* run(write.sql, write.params);
    },
    { lock: `quota:${cap.resource}:${cap.keyId}` },
  );
}

/** How many of each a key holds now, in one statement. */
export async function quotaUsage(db: SqlRunner, keyId: string, at: string): Promise<Record<QuotaResource, number>> {
  const resources = Object.keys(ROWS) as QuotaResource[];
  // Every count's $1 is the key and the share links' $2 is now, as in the statement as a whole.
  const parts = resources.map((resource) => `(${counted(resource, keyId, at).sql}) AS ${resource}`);
  const [row] = await db.all<Record<QuotaResource, number | string>>(`SELECT ${parts.join(", ")}`, [keyId, at]);
  return Object.fromEntries(resources.map((r) => [r, Number(row![r])])) as Record<QuotaResource, number>;
}

/** How many of one resource a key holds now. */
export async function quotaCount(db: SqlRunner, keyId: string, resource: QuotaResource, at: string): Promise<number> {
  const { sql, params } = counted(resource, keyId, at);
  const [row] = await db.all<{ n: number | string }>(sql.replace("COUNT(*)", "COUNT(*) AS n"), params);
  return Number(row?.n ?? 0);
}
