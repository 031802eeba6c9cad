import "server-only";
import { NEXT_QUEUED_RUN } from "./migrations";
import { admit, CONCURRENCY_METER, mergeCharges, settled, type MeterRow } from "./meters";
import { runEnded, toRun, warningsJson, type RunRow } from "./rows";
import { all, run, type Dialect, type StoreRunner, type Tx } from "./runner";
import type { Admission, MeterCharge, NewRun, Settlement, Store } from "./store-types";

/** The channel cancel requests are announced on (the payload is the run id). */
const CANCEL_CHANNEL = "genserve_run_cancels";

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

/**
 * Runs: what every run writes, written once for both backends — admission with its key's meters,
 * further reservations, the end with its callback event and the meters settled, requeue, the claim
 * of a queued run, cancel requests. The hot writes (`insert`, `reserve`, `finish`) join SQLite's
 * group commit; on PostgreSQL each is a transaction whose meter rows are locked in name order.
 */
export function runWrites(db: StoreRunner): Pick<Store["runs"], "insert" | "reserve" | "finish" | "requeue" | "claimQueued" | "requestCancel" | "listenCancels"> {
  const { dialect } = db;
  return {
    async insert(newRun, charges = []) {
      return db.transact(function* () {
        const admission = yield* reserveMeters(dialect, newRun.id, newRun.keyId, charges, newRun.createdAt);
        if (admission.ok) yield* run(INSERT_RUN, runParams(newRun));
        return admission;
      }, { grouped: true });
    },
    async reserve(runId, keyId, charges, at) {
      return db.transact(function* () {
        // A run that has ended (left behind at its deadline, say) reserves nothing more: nothing would settle it.
        const [row] = yield* all<{ status: string }>(`SELECT status FROM runs WHERE id = $1${dialect.forUpdate}`, [runId]);
        if (row?.status !== "running") throw runEnded(runId);
        return yield* reserveMeters(dialect, runId, keyId, charges, at);
      }, { grouped: true });
    },
    async finish(id, outcome, event, owner, settle = {}) {
      return db.transact(function* () {
        const changed = yield* run(
          `UPDATE runs SET status = $2, output_json = $3, error_json = $4, model_name = $5, model_tag = $6, decoding = $7, input_tokens = $8,
                  output_tokens = $9, cost = $10, duration_ms = $11, attempts = $12, finished_at = $13, updated_at = $13,
                  request_json = NULL, lease_owner = NULL, lease_until = NULL, warnings_json = $15, pace = $16, grounding_json = $17
           WHERE id = $1 AND status IN ('running', 'queued') AND (CAST($14 AS TEXT) IS NULL OR lease_owner = $14)`,
          [
            id,
            outcome.status,
            json(outcome.output),
            json(outcome.error),
            outcome.modelName,
            outcome.modelTag,
            outcome.decoding,
            outcome.inputTokens,
            outcome.outputTokens,
            outcome.cost,
            outcome.durationMs,
            outcome.attempts,
            outcome.finishedAt,
            owner ?? null,
            warningsJson(outcome.warnings),
            json(outcome.pace),
            json(outcome.grounding),
          ],
        );
        if (changed === 0) return false;
        if (event) {
          yield* run(
            `INSERT INTO events (id, run_id, key_id, url, headers, payload, status, attempts, next_attempt_at, created_at, updated_at, traceparent, lease_until)
             VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, $7, $8, $8, $9, $10)`,
            [event.id, event.runId, event.keyId, event.url, JSON.stringify(event.headers), event.payload, event.nextAttemptAt, event.createdAt, event.traceparent ?? null, event.leaseUntil ?? null],
          );
        }
        yield* settleMeters(id, settle, outcome.finishedAt ?? new Date().toISOString());
        return true;
      }, { grouped: true });
    },
    async requeue(id, at) {
      await db.transact(function* () {
        yield* run("UPDATE runs SET status = 'queued', lease_owner = NULL, lease_until = NULL, updated_at = $2 WHERE id = $1", [id, at]);
        yield* settleMeters(id, {}, at, CONCURRENCY_METER);
      });
    },
    async claimQueued(at, lease) {
      return db.transact(function* () {
        // The next queued run in keys' turns (NEXT_QUEUED_RUN) whose key has a free slot, not being claimed by another process.
        const [next] = yield* all<{ id: string; key_id: string; concurrency: number | null }>(
          `${NEXT_QUEUED_RUN.replace("$SELECT", "r.id, r.key_id, k.concurrency")} LIMIT 1${dialect.skipLockedOf("r")}`,
          [],
        );
        if (!next) return null;
        if (next.concurrency !== null && !(yield* reserveMeters(dialect, next.id, next.key_id, [{ meter: CONCURRENCY_METER, amount: 1, limit: next.concurrency }], at)).ok) return null;
        const [row] = yield* all<RunRow & { request_json: string }>(
          "UPDATE runs SET status = 'running', async_starts = async_starts + 1, lease_owner = $2, lease_until = $3, updated_at = $1 WHERE id = $4 AND status = 'queued' RETURNING *",
          [at, lease.owner, lease.until, next.id],
        );
        // The candidate is locked (PostgreSQL) or this is the one writer (SQLite): it is still queued. Were it
        // not, throwing rolls back the concurrency slot just reserved instead of committing it.
        if (!row) throw new Error(`queued run ${next.id} changed while it was being claimed`);
        yield* run("UPDATE api_keys SET queue_served_at = $1 WHERE id = $2", [at, next.key_id]);
        return { ...toRun(row), request: JSON.parse(row.request_json) as unknown };
      });
    },
    async requestCancel(id, at) {
      const changed = await db.write(
        "UPDATE runs SET cancel_requested_at = COALESCE(cancel_requested_at, $2) WHERE id = $1 AND status IN ('queued', 'running')",
        [id, at],
        { grouped: true, announce: { channel: CANCEL_CHANNEL, payload: id } },
      );
      return changed > 0;
    },
    async listenCancels(onCancel, onReconnect) {
      return db.listen(CANCEL_CHANNEL, onCancel, onReconnect);
    },
  };
}

const INSERT_RUN = `INSERT INTO runs (id, operation, workflow_slug, key_id, status, input, schema_json, context_slugs, attachments, callback, model_tag,
                   created_at, updated_at, request_json, context_chunks, workflow_version, context_versions, prompt_hash, schema_hash,
                   prompt_tokens, output_token_limit, lease_owner, lease_until, traceparent, evaluation_id, workflow_label, draft, history)
 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27)`;

function runParams(r: NewRun): unknown[] {
  return [
    r.id,
    r.operation,
    r.workflowSlug,
    r.keyId,
    r.status ?? "running",
    r.input,
    json(r.schema),
    JSON.stringify(r.contextSlugs),
    JSON.stringify(r.attachments),
    json(r.callback),
    r.modelTag,
    r.createdAt,
    r.request === undefined ? null : JSON.stringify(r.request),
    r.contextChunks && r.contextChunks.length > 0 ? JSON.stringify(r.contextChunks) : null,
    r.workflowVersion ?? null,
    json(r.contextVersions),
    r.promptHash ?? null,
    r.schemaHash ?? null,
    r.promptTokens ?? null,
    r.outputTokenLimit ?? null,
    r.lease?.owner ?? null,
    r.lease?.until ?? null,
    r.traceparent ?? null,
    r.evaluationId ?? null,
    r.workflowLabel ?? null,
    r.draft ? JSON.stringify(r.draft) : null,
    r.history && r.history.length > 0 ? JSON.stringify(r.history) : null,
  ];
}

/**
 * Reserves `charges` for a run, all or none, in four statements whatever their number: the key's
 * meter rows made to exist, read (and on PostgreSQL locked, in name order, so two runs of one key
 * never wait on each other crosswise), checked (`admit`), then raised and recorded per run.
 */
function* reserveMeters(dialect: Dialect, runId: string, keyId: string, charges: readonly MeterCharge[], at: string): Tx<Admission> {
  const merged = mergeCharges(charges);
  if (merged.length === 0) return { ok: true, states: [] };
  const batch = dialect.rows(merged.map((c) => ({ meter: c.meter, amount: c.amount })));
  const charged = dialect.rowsOf("$2", "x", { meter: "text", amount: "bigint" });
  // (`WHERE true`: SQLite reads `ON CONFLICT` after a bare FROM as a join's ON.)
  yield* run(`INSERT INTO key_usage (key_id, meter, used, reserved, updated_at) SELECT $1, x.meter, 0, 0, $3 FROM ${charged} WHERE true ON CONFLICT (key_id, meter) DO NOTHING`, [keyId, batch, at]);
  const rows = yield* all<MeterRow>(`SELECT meter, used, reserved FROM key_usage WHERE key_id = $1 AND ${dialect.inList("meter", "$2")} ORDER BY meter${dialect.forUpdate}`, [
    keyId,
    dialect.list(merged.map((c) => c.meter)),
  ]);
  const admission = admit(merged, rows);
  if (!admission.ok) return admission;
  yield* run(`UPDATE key_usage SET reserved = key_usage.reserved + x.amount, updated_at = $3 FROM ${charged} WHERE key_usage.key_id = $1 AND key_usage.meter = x.meter`, [keyId, batch, at]);
  yield* run(
    `INSERT INTO usage_reservations (run_id, key_id, meter, amount) SELECT $3, $1, x.meter, x.amount FROM ${charged} WHERE true
     ON CONFLICT (run_id, meter) DO UPDATE SET amount = usage_reservations.amount + excluded.amount`,
    [keyId, batch, runId],
  );
  return admission;
}

/** Settles a run's reservations (`only`: just that meter) to what it used; meter rows in name order. */
function* settleMeters(runId: string, settle: Settlement, at: string, only?: string): Tx<void> {
  const reservations = yield* all<{ key_id: string; meter: string; amount: number }>(
    "DELETE FROM usage_reservations WHERE run_id = $1 AND (CAST($2 AS TEXT) IS NULL OR meter = $2) RETURNING key_id, meter, amount",
    [runId, only ?? null],
  );
  for (const r of reservations.sort((a, b) => (a.meter < b.meter ? -1 : 1))) {
    yield* run("UPDATE key_usage SET reserved = reserved - $1, used = used + $2, updated_at = $3 WHERE key_id = $4 AND meter = $5", [r.amount, settled(r, settle), at, r.key_id, r.meter]);
  }
}
