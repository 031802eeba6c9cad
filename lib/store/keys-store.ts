import "server-only";
import type { MeterRow } from "./meters";
import { keyPatch, toKey, type KeyRow } from "./rows";
import { all, run, type StoreRunner } from "./runner";
import type { ApiKeyRecord, Store } from "./store-types";

export const KEY_INSERT = `INSERT INTO api_keys (id, name, hash, prefix, admin, created_at, last_used_at, revoked_at, webhook_secret,
                                          rpm, tpm, concurrency, workflows, budget_daily_nanos, budget_monthly_nanos, project_id, role)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`;

export const keyValues = (key: ApiKeyRecord) => [
  key.id,
  key.name,
  key.hash,
  key.prefix,
  key.role === "admin" ? 1 : 0,
  key.createdAt,
  key.lastUsedAt,
  key.revokedAt,
  key.webhookSecret,
  key.limits.rpm,
  key.limits.tpm,
  key.limits.concurrency,
  key.limits.workflows === null ? null : JSON.stringify(key.limits.workflows),
  key.limits.budgetDailyNanos,
  key.limits.budgetMonthlyNanos,
  key.projectId,
  key.role,
];

/** API keys, written once for both backends (see runner.ts). */
/** PostgreSQL's advisory lock key of the first key, as earlier releases took it (a rolling upgrade's replicas agree). */
const FIRST_KEY_LOCK = 7_251_094;

export function keysStore(db: StoreRunner): Store["keys"] {
  const byId = async (id: string) => (await db.all<KeyRow>("SELECT * FROM api_keys WHERE id = $1", [id]))[0];
  return {
    async insert(key) {
      await db.run(KEY_INSERT, keyValues(key));
    },
    async insertFirst(key) {
      // Once, whoever starts at the same time: the count and the insert under one lock.
      return db.transact(
        function* () {
          const [row] = yield* all<{ n: number | string }>("SELECT COUNT(*) AS n FROM api_keys", []);
          if (Number(row?.n ?? 0) > 0) return false;
          yield* run(KEY_INSERT, keyValues(key));
          return true;
        },
        { lock: FIRST_KEY_LOCK },
      );
    },
    async findByHash(hash) {
      const [row] = await db.all<KeyRow>("SELECT * FROM api_keys WHERE hash = $1", [hash]);
      return row ? toKey(row) : null;
    },
    async get(id) {
      const row = await byId(id);
      return row ? toKey(row) : null;
    },
    async list(projectId) {
      if (projectId !== undefined) return (await db.all<KeyRow>("SELECT * FROM api_keys WHERE project_id = $1 ORDER BY created_at, id", [projectId])).map(toKey);
      return (await db.all<KeyRow>("SELECT * FROM api_keys ORDER BY created_at, id", [])).map(toKey);
    },
    async revoke(id, at) {
      return (await db.run("UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL", [at, id])) > 0;
    },
    async touch(id, at) {
      await db.run("UPDATE api_keys SET last_used_at = $1 WHERE id = $2", [at, id]);
    },
    async update(id, patch) {
      const sets = keyPatch(patch);
      if (sets.columns.length === 0) return (await byId(id)) !== undefined;
      const sql = `UPDATE api_keys SET ${sets.columns.map((c, i) => `${c} = $${i + 1}`).join(", ")} WHERE id = $${sets.columns.length + 1}`;
      return (await db.run(sql, [...sets.values, id])) > 0;
    },
    async meters(id, meters) {
      const rows = await db.all<MeterRow>(`SELECT meter, used, reserved FROM key_usage WHERE key_id = $1 AND ${db.dialect.inList("meter", "$2")}`, [id, db.dialect.list(meters)]);
      return meters.map((meter) => rows.find((r) => r.meter === meter) ?? { meter, used: 0, reserved: 0 });
    },
    async secrets(id) {
      const row = await byId(id);
      if (!row?.webhook_secret) return null;
      return { current: row.webhook_secret, previous: row.previous_webhook_secret, previousUntil: row.previous_secret_until };
    },
    async rotateSecret(id, secret, previousUntil) {
      return (await db.run("UPDATE api_keys SET previous_webhook_secret = webhook_secret, previous_secret_until = $1, webhook_secret = $2 WHERE id = $3", [previousUntil, secret, id])) > 0;
    },
  };
}
