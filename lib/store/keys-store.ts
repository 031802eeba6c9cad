import "server-only";
import type { MeterRow } from "./meters";
import { newWebhookSecret } from "../ids";
import { keyPatch, toKey as plainKey, type KeyRow } from "./rows";
import { all, run, type StoreRunner } from "./runner";
import { isSealed, type SecretBox } from "./secret-box";
import type { ApiKeyRecord, Store } from "./store-types";

export const KEY_INSERT = `INSERT INTO api_keys (id, name, hash, prefix, admin, created_at, last_used_at, revoked_at, webhook_secret,
                                          rpm, tpm, concurrency, workflows, budget_daily_nanos, budget_monthly_nanos, project_id, role)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`;

export const keyValues = (key: ApiKeyRecord, box: SecretBox) => [
  key.id,
  key.name,
  key.hash,
  key.prefix,
  key.role === "admin" ? 1 : 0,
  key.createdAt,
  key.lastUsedAt,
  key.revokedAt,
  box.seal(key.webhookSecret, key.id),
  key.limits.rpm,
  key.limits.tpm,
  key.limits.concurrency,
  key.limits.workflows === null ? null : JSON.stringify(key.limits.workflows),
  key.limits.budgetDailyNanos,
  key.limits.budgetMonthlyNanos,
  key.projectId,
  key.role,
];

/** PostgreSQL's advisory lock key of the first key, as earlier releases took it (a rolling upgrade's replicas agree). */
const FIRST_KEY_LOCK = 7_251_094;

/** The lock sealing plain-text secrets runs under (PostgreSQL: replicas starting together seal each value once). */
const SEAL_LOCK = 7_251_095;

/**
 * API keys, written once for both backends (see runner.ts). Signing secrets are sealed by `box` on
 * the way in and opened on the way out: nothing above the store sees a sealed value.
 */
export function keysStore(db: StoreRunner, box: SecretBox): Store["keys"] {
  const byId = async (id: string) => (await db.all<KeyRow>("SELECT * FROM api_keys WHERE id = $1", [id]))[0];
  const toKey = (row: KeyRow) => openKey(row, box);
  return {
    async insert(key) {
      await db.run(KEY_INSERT, keyValues(key, box));
    },
    async insertFirst(key) {
      // Once, whoever starts at the same time: the count and the insert under one lock.
      return db.transact(
        function* () {
          const [row] = yield* all<{ n: number | string }>("SELECT COUNT(*) AS n FROM api_keys", []);
          if (Number(row?.n ?? 0) > 0) return false;
          yield* run(KEY_INSERT, keyValues(key, box));
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
      const previous = row.previous_webhook_secret === null ? null : box.open(row.previous_webhook_secret, row.id);
      return { current: box.open(row.webhook_secret, row.id), previous, previousUntil: row.previous_secret_until };
    },
    async rotateSecret(id, secret, previousUntil) {
      return (await db.run("UPDATE api_keys SET previous_webhook_secret = webhook_secret, previous_secret_until = $1, webhook_secret = $2 WHERE id = $3", [previousUntil, box.seal(secret, id), id])) > 0;
    },
  };
}

export const openKey = (row: KeyRow, box: SecretBox): ApiKeyRecord => ({ ...plainKey(row), webhookSecret: row.webhook_secret ? box.open(row.webhook_secret, row.id) : "" });

/**
 * Run when the store opens: every key's signing secrets sealed under `box` — those written in plain
 * text before encryption existed, and a first secret for keys made before signing existed. Once
 * and idempotent (a sealed value is left as it is; each update checks the value it replaces), in
 * one transaction under a lock, so replicas starting together agree. A sealed value the key does
 * not open stops the start with the reason (the wrong key is configured).
 */
export async function sealStoredSecrets(db: StoreRunner, box: SecretBox): Promise<number> {
  return db.transact(
    function* () {
      const rows = yield* all<{ id: string; webhook_secret: string | null; previous_webhook_secret: string | null }>(
        "SELECT id, webhook_secret, previous_webhook_secret FROM api_keys ORDER BY id",
        [],
      );
      let sealed = 0;
      for (const row of rows) {
        for (const column of ["webhook_secret", "previous_webhook_secret"] as const) {
          const value = row[column];
          if (value !== null && isSealed(value)) {
            box.open(value, row.id);
            continue;
          }
          if (value === null && column === "previous_webhook_secret") continue;
          const plain = value ?? newWebhookSecret();
          sealed += yield* run(`UPDATE api_keys SET ${column} = $1 WHERE id = $2 AND ${db.dialect.same(column, "$3")}`, [box.seal(plain, row.id), row.id, value]);
        }
      }
      return sealed;
    },
    { lock: SEAL_LOCK },
  );
}
