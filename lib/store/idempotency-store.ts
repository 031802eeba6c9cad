import "server-only";
import { all, run, type StoreRunner } from "./runner";
import type { IdempotencyRecord, Store } from "./store-types";

interface IdempotencyRow {
  request_hash: string;
  state: "in_progress" | "done";
  run_id: string | null;
  response_status: number | null;
  response_body: string | null;
  created_at: string;
}

/** Idempotency-Key records, written once for both backends. */
export function idempotencyStore(db: StoreRunner): Store["idempotency"] {
  const { forUpdate } = db.dialect;
  return {
    async begin(keyId, key, requestHash, at, maxAgeMs) {
      return db.transact(function* () {
        // One row per (key, Idempotency-Key): of two requests at once, exactly one inserts it.
        const inserted = yield* run(
          `INSERT INTO idempotency_keys (key_id, idempotency_key, request_hash, state, created_at) VALUES ($1, $2, $3, 'in_progress', $4)
           ON CONFLICT (key_id, idempotency_key) DO NOTHING`,
          [keyId, key, requestHash, at],
        );
        if (inserted > 0) return null;
        const [row] = yield* all<IdempotencyRow>(`SELECT * FROM idempotency_keys WHERE key_id = $1 AND idempotency_key = $2${forUpdate}`, [keyId, key]);
        if (row && Date.parse(row.created_at) > Date.parse(at) - maxAgeMs) {
          const record: IdempotencyRecord = { requestHash: row.request_hash, state: row.state, runId: row.run_id, responseStatus: row.response_status, responseBody: row.response_body, createdAt: row.created_at };
          return record;
        }
        // Expired: this request takes the key over.
        yield* run(
          "UPDATE idempotency_keys SET request_hash = $3, state = 'in_progress', run_id = NULL, response_status = NULL, response_body = NULL, created_at = $4 WHERE key_id = $1 AND idempotency_key = $2",
          [keyId, key, requestHash, at],
        );
        return null;
      });
    },
    async complete(keyId, key, result) {
      await db.run("UPDATE idempotency_keys SET state = 'done', run_id = $1, response_status = $2, response_body = $3 WHERE key_id = $4 AND idempotency_key = $5", [
        result.runId,
        result.status,
        result.body,
        keyId,
        key,
      ]);
    },
    async release(keyId, key) {
      await db.run("DELETE FROM idempotency_keys WHERE key_id = $1 AND idempotency_key = $2", [keyId, key]);
    },
  };
}
