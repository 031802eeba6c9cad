import "server-only";
import pg from "pg";
import { forPostgres, MIGRATIONS, NEXT_QUEUED_RUN, NUMBERED_TABLES } from "./migrations";
import { checkTransferRow, ImportTargetNotEmpty, pagedRows, upgradedRows } from "./table-transfer";
import { keyPatch, runEnded, THREAD_INSERT, toCatalog, toEvent, toKey, toRun, toStranded, warningsJson, type CatalogRow, type EventRow, type KeyRow, type RunRow } from "./rows";
import { admit, CONCURRENCY_METER, mergeCharges, settled, type MeterRow } from "./meters";
import { usageReport, usageStatements } from "./usage-report";
import { catalogStore } from "./catalog-store";
import { eventsStore } from "./events-store";
import { storeHealth } from "./health-store";
import { idempotencyStore } from "./idempotency-store";
import { keysStore, sealStoredSecrets } from "./keys-store";
import { secretBox } from "./secret-box";
import { auditStore } from "./audit-store";
import { runReads } from "./runs-store";
import { streamReads } from "./streams-store";
import { threadsStore } from "./threads-store";
import { usageStore } from "./usage-store";
import { postgresRunner } from "./postgres-runner";
import { evaluationStore } from "./evaluations-store";
import { inboxStore } from "./inboxes";
import { lifecycleStore } from "./lifecycle-store";
import { cappedWrite, quotaCount, quotaUsage } from "./quotas";
import { guardStorage, probeWrite } from "./storage-faults";
import { listRuns } from "./run-list";
import { MEASURE_IMPORTED, threadReads } from "./thread-reads";
import type { Admission, IdempotencyRecord, MeterCharge, Settlement, Store, TransferRow, TransferTable } from "./store-types";

export interface PostgresOptions {
  /** Connections this process keeps at most. */
  max: number;
  idleTimeoutMs: number;
  /** How long to wait for a connection before answering 503 storage_unavailable. */
  connectionTimeoutMs: number;
  /** The 32-byte key sealing signing secrets: configured (security.secretsKey), never in the database. */
  secretsKey: Buffer;
}

/** The advisory lock key migrations run under: processes starting together migrate once. */
const MIGRATION_LOCK = 7_251_093;

const INT8_OID = 20;

/** Reserves `charges` for a run within `client`'s transaction, all or none; meter rows are locked in name order. */
async function reserveIn(client: pg.PoolClient, runId: string, keyId: string, charges: readonly MeterCharge[], at: string): Promise<Admission> {
  const merged = mergeCharges(charges);
  if (merged.length === 0) return { ok: true, states: [] };
  const meters = merged.map((c) => c.meter);
  await client.query(
    "INSERT INTO key_usage (key_id, meter, used, reserved, updated_at) SELECT $1, m, 0, 0, $3 FROM unnest($2::text[]) AS m ON CONFLICT (key_id, meter) DO NOTHING",
    [keyId, meters, at],
  );
  const { rows } = await client.query<MeterRow>("SELECT meter, used, reserved FROM key_usage WHERE key_id = $1 AND meter = ANY($2) ORDER BY meter FOR UPDATE", [keyId, meters]);
  const admission = admit(merged, rows);
  if (!admission.ok) return admission;
  const amounts = merged.map((c) => c.amount);
  await client.query(
    `UPDATE key_usage SET reserved = key_usage.reserved + x.amount, updated_at = $4
     FROM unnest($2::text[], $3::bigint[]) AS x(meter, amount) WHERE key_usage.key_id = $1 AND key_usage.meter = x.meter`,
    [keyId, meters, amounts, at],
  );
  await client.query(
    `INSERT INTO usage_reservations (run_id, key_id, meter, amount) SELECT $1, $2, m, a FROM unnest($3::text[], $4::bigint[]) AS x(m, a)
     ON CONFLICT (run_id, meter) DO UPDATE SET amount = usage_reservations.amount + excluded.amount`,
    [runId, keyId, meters, amounts],
  );
  return admission;
}

/** Settles a run's reservations (`only`: just that meter) within `client`'s transaction. */
async function settleIn(client: pg.PoolClient, runId: string, settle: Settlement, at: string, only?: string): Promise<void> {
  const { rows } = await client.query<{ key_id: string; meter: string; amount: number }>(
    "DELETE FROM usage_reservations WHERE run_id = $1 AND ($2::text IS NULL OR meter = $2) RETURNING key_id, meter, amount",
    [runId, only ?? null],
  );
  for (const r of rows.sort((a, b) => (a.meter < b.meter ? -1 : 1))) {
    await client.query("UPDATE key_usage SET reserved = reserved - $1, used = used + $2, updated_at = $3 WHERE key_id = $4 AND meter = $5", [r.amount, settled(r, settle), at, r.key_id, r.meter]);
  }
}

/** The channel appends to streamed runs are announced on (the payload is the run id). */
const STREAM_CHANNEL = "genserve_streams";
/** The channel runs' cancel requests are announced on (the payload is the run id). */
const CANCEL_CHANNEL = "genserve_run_cancels";

/**
 * LISTENs on `channel` with a connection of its own (a pooled one cannot hold a LISTEN), and
 * reconnects with back-off when the connection is lost; `onReconnect` runs once it is back, since
 * notifications sent meanwhile are gone.
 */
async function listenChannel(url: string, channel: string, onMessage: (payload: string) => void, onReconnect: () => void): Promise<{ close(): Promise<void> }> {
  let closed = false;
  let client: pg.Client | null = null;
  let retry: NodeJS.Timeout | null = null;
  const connect = async (): Promise<boolean> => {
    const next = new pg.Client({ connectionString: url });
    next.on("error", () => undefined);
    next.on("notification", (message) => {
      if (message.channel === channel && message.payload) onMessage(message.payload);
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${channel}`);
    } catch {
      await next.end().catch(() => undefined);
      return false;
    }
    if (closed) {
      await next.end().catch(() => undefined);
      return false;
    }
    client = next;
    next.once("end", () => {
      client = null;
      if (!closed) schedule(250);
    });
    return true;
  };
  const schedule = (delay: number) => {
    retry = setTimeout(async () => {
      if (closed) return;
      if (await connect()) onReconnect();
      else schedule(Math.min(delay * 2, 5_000));
    }, delay);
    retry.unref();
  };
  if (!(await connect())) schedule(250);
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => undefined);
    },
  };
}

/**
 * The storage interface on PostgreSQL (node-postgres, a pool per process): the same tables and
 * migrations as SQLite, so any number of processes can share one database. Claims of shared work
 * (queued runs, due events, stranded runs) use `FOR UPDATE SKIP LOCKED` under leases, so each item
 * is taken by one process. A database that cannot be reached answers 503 `storage_unavailable`; the
 * pool reconnects by itself when it is back.
 */
export function openPostgresStore(url: string, options: PostgresOptions): Store {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max,
    idleTimeoutMillis: options.idleTimeoutMs,
    connectionTimeoutMillis: options.connectionTimeoutMs,
    // Row numbers (BIGINT) as numbers, as SQLite gives them: they stay far below 2^53.
    types: { getTypeParser: ((oid: number, format?: "text" | "binary") => (oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser },
  });
  // An idle client that loses its connection emits here; without a listener it would crash the process.
  pool.on("error", () => undefined);

  const runner = postgresRunner(pool);
  const box = secretBox(options.secretsKey);
  const { guard, query, transaction } = runner;
  const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

  const evaluations = evaluationStore(runner);
  const { catalogVersions, ...lifecycle } = lifecycleStore(runner);

  return guardStorage({
    kind: "postgres",
    ...evaluations,
    ...lifecycle,
    ...storeHealth(runner),
    pool() {
      return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max ?? 10 };
    },
    async migrate() {
      await guard(async () => {
        const client = await pool.connect();
        try {
          await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
          await client.query("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)");
          const done = new Set((await client.query<{ version: number }>("SELECT version FROM schema_migrations")).rows.map((r) => r.version));
          for (const migration of MIGRATIONS) {
            if (done.has(migration.version)) continue;
            await client.query("BEGIN");
            try {
              await client.query(forPostgres(migration.sql));
              await client.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [migration.version, migration.name, new Date().toISOString()]);
              await client.query("COMMIT");
            } catch (error) {
              await client.query("ROLLBACK").catch(() => undefined);
              throw error;
            }
          }
        } finally {
          await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch(() => undefined);
          client.release();
        }
      });
      // Plain-text signing secrets (and missing ones) sealed, under a lock of their own: once, whoever starts together.
      await sealStoredSecrets(runner, box);
    },
    keys: keysStore(runner, box),
    audit: auditStore(runner),
    runs: {
      async insert(run, charges = []) {
        return transaction(async (client) => {
          const admission = await reserveIn(client, run.id, run.keyId, charges, run.createdAt);
          if (!admission.ok) return admission;
          await client.query(
          `INSERT INTO runs (id, operation, workflow_slug, key_id, status, input, schema_json, context_slugs, attachments, callback, model_tag,
                             created_at, updated_at, request_json, context_chunks, workflow_version, context_versions, prompt_hash, schema_hash,
                             prompt_tokens, output_token_limit, lease_owner, lease_until, traceparent, evaluation_id, workflow_label, draft)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26)`,
          [
            run.id,
            run.operation,
            run.workflowSlug,
            run.keyId,
            run.status ?? "running",
            run.input,
            json(run.schema),
            JSON.stringify(run.contextSlugs),
            JSON.stringify(run.attachments),
            json(run.callback),
            run.modelTag,
            run.createdAt,
            run.request === undefined ? null : JSON.stringify(run.request),
            run.contextChunks && run.contextChunks.length > 0 ? JSON.stringify(run.contextChunks) : null,
            run.workflowVersion ?? null,
            json(run.contextVersions),
            run.promptHash ?? null,
            run.schemaHash ?? null,
            run.promptTokens ?? null,
            run.outputTokenLimit ?? null,
            run.lease?.owner ?? null,
            run.lease?.until ?? null,
            run.traceparent ?? null,
            run.evaluationId ?? null,
            run.workflowLabel ?? null,
            run.draft ? JSON.stringify(run.draft) : null,
          ],
        );
          return admission;
        });
      },
      async reserve(runId, keyId, charges, at) {
        return transaction(async (client) => {
          // A run that has ended (left behind at its deadline, say) reserves nothing more: nothing would settle it.
          const { rows } = await client.query<{ status: string }>("SELECT status FROM runs WHERE id = $1 FOR UPDATE", [runId]);
          if (rows[0]?.status !== "running") throw runEnded(runId);
          return reserveIn(client, runId, keyId, charges, at);
        });
      },
      async finish(id, outcome, event, owner, settle = {}) {
        return transaction(async (client) => {
          const updated = await client.query(
            `UPDATE runs SET status = $2, output_json = $3, error_json = $4, model_name = $5, model_tag = $6, decoding = $7, input_tokens = $8,
                    output_tokens = $9, cost = $10, duration_ms = $11, attempts = $12, finished_at = $13, updated_at = $13,
                    request_json = NULL, lease_owner = NULL, lease_until = NULL, warnings_json = $15, pace = $16
             WHERE id = $1 AND status IN ('running', 'queued') AND ($14::text IS NULL OR lease_owner = $14)`,
            [id, outcome.status, json(outcome.output), json(outcome.error), outcome.modelName, outcome.modelTag, outcome.decoding, outcome.inputTokens, outcome.outputTokens, outcome.cost, outcome.durationMs, outcome.attempts, outcome.finishedAt, owner ?? null, warningsJson(outcome.warnings), outcome.pace ? JSON.stringify(outcome.pace) : null],
          );
          if ((updated.rowCount ?? 0) === 0) return false;
          if (event) {
            await client.query(
              `INSERT INTO events (id, run_id, key_id, url, headers, payload, status, attempts, next_attempt_at, created_at, updated_at, traceparent, lease_until)
               VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, $7, $8, $8, $9, $10)`,
              [event.id, event.runId, event.keyId, event.url, JSON.stringify(event.headers), event.payload, event.nextAttemptAt, event.createdAt, event.traceparent ?? null, event.leaseUntil ?? null],
            );
          }
          await settleIn(client, id, settle, outcome.finishedAt ?? new Date().toISOString());
          return true;
        });
      },
      ...runReads(runner),
      async requeue(id, at) {
        await transaction(async (client) => {
          await client.query("UPDATE runs SET status = 'queued', lease_owner = NULL, lease_until = NULL, updated_at = $2 WHERE id = $1", [id, at]);
          await settleIn(client, id, {}, at, CONCURRENCY_METER);
        });
      },
      async requestCancel(id, at) {
        // One statement: the announcement goes out when it commits, and only for a run it marked.
        const { rows } = await query<{ id: string }>(
          `WITH marked AS (
             UPDATE runs SET cancel_requested_at = COALESCE(cancel_requested_at, $2) WHERE id = $1 AND status IN ('queued', 'running') RETURNING id
           )
           SELECT id, pg_notify($3, id) FROM marked`,
          [id, at, CANCEL_CHANNEL],
        );
        return rows.length > 0;
      },
      async listenCancels(onCancel, onReconnect) {
        return listenChannel(url, CANCEL_CHANNEL, onCancel, onReconnect);
      },
      async claimQueued(at, lease) {
        return transaction(async (client) => {
          // The next queued run in keys' turns (NEXT_QUEUED_RUN) whose key has a free slot, not already being claimed by another process.
          const { rows: candidates } = await client.query<{ id: string; key_id: string; concurrency: number | null }>(
            `${NEXT_QUEUED_RUN.replace("$SELECT", "r.id, r.key_id, k.concurrency")} LIMIT 1 FOR UPDATE OF r SKIP LOCKED`,
          );
          const next = candidates[0];
          if (!next) return null;
          if (next.concurrency !== null && !(await reserveIn(client, next.id, next.key_id, [{ meter: CONCURRENCY_METER, amount: 1, limit: next.concurrency }], at)).ok) return null;
          const { rows } = await client.query<RunRow & { request_json: string }>(
            "UPDATE runs SET status = 'running', async_starts = async_starts + 1, lease_owner = $2, lease_until = $3, updated_at = $1 WHERE id = $4 RETURNING *",
            [at, lease.owner, lease.until, next.id],
          );
          await client.query("UPDATE api_keys SET queue_served_at = $1 WHERE id = $2", [at, next.key_id]);
          const row = rows[0]!;
          return { ...toRun(row), request: JSON.parse(row.request_json) as unknown };
        });
      },
    },
    events: eventsStore(runner),
    inboxes: inboxStore(runner),
    quotas: {
      usage: (keyId, at) => quotaUsage(runner, keyId, at),
      count: (keyId, resource, at) => quotaCount(runner, keyId, resource, at),
    },
    catalog: catalogStore(runner, catalogVersions),
    idempotency: idempotencyStore(runner),
    threads: threadsStore(runner),
    usage: usageStore(runner),
    streams: {
      async append(runId, events, at) {
        if (events.length === 0) return;
        // One statement, one round trip, for the batch and its announcement: the notification goes
        // out when the statement's own transaction commits, and never for a write that failed.
        await query(
          `WITH written AS (
             INSERT INTO stream_events (run_id, seq, event, final, created_at)
             SELECT $1, s, e, f, $5 FROM unnest($2::int[], $3::text[], $4::int[]) AS t(s, e, f)
             RETURNING 1
           )
           SELECT pg_notify($6, $1), (SELECT count(*) FROM written) AS written`,
          [runId, events.map((e) => e.seq), events.map((e) => e.event), events.map((e) => (e.final ? 1 : 0)), at, STREAM_CHANNEL],
        );
      },
      ...streamReads(runner),
      async listen(onAppended, onReconnect) {
        return listenChannel(url, STREAM_CHANNEL, onAppended, onReconnect);
      },
    },
    transfer: {
      rows(table) {
        return pagedRows(table, async (sql, params) => {
          let n = 0;
          return (await query<TransferRow>(sql.replace(/\?/g, () => `$${++n}`), params)).rows;
        });
      },
      async load(source) {
        return transaction(async (client) => {
          // Nothing else may write while the import runs; it fails rather than wait on a busy database.
          await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
          if ((await client.query("SELECT 1 FROM api_keys UNION ALL SELECT 1 FROM runs LIMIT 1")).rowCount) throw new ImportTargetNotEmpty();
          const { rows: info } = await client.query<{ table_name: string; column_name: string; data_type: string }>(
            "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema()",
          );
          const types = new Map<string, Map<string, string>>();
          for (const c of info) types.set(c.table_name, (types.get(c.table_name) ?? new Map()).set(c.column_name, c.data_type));
          const columnsOf = (table: TransferTable) => new Set(types.get(table)?.keys() ?? []);
          const cast = (table: string, column: string, value: TransferRow[string]) => {
            if (value === null) return null;
            const type = types.get(table)?.get(column);
            if (type === "boolean") return value === true || value === 1 || value === "1" || value === "true";
            if (type === "integer" || type === "bigint") return Number(value);
            return typeof value === "string" ? value : String(value);
          };
          const counts: Record<string, number> = {};
          let batch: { table: string; names: string[]; rows: unknown[][] } | null = null;
          const flush = async () => {
            if (!batch || batch.rows.length === 0) return;
            const { table, names, rows } = batch;
            let n = 0;
            const values = rows.map((r) => `(${r.map(() => `$${++n}`).join(", ")})`).join(", ");
            await client.query(`INSERT INTO ${table} (${names.map((c) => `"${c}"`).join(", ")}) VALUES ${values}`, rows.flat());
            counts[table] = (counts[table] ?? 0) + rows.length;
            batch = null;
          };
          for await (const { table, row } of upgradedRows(source)) {
            checkTransferRow(table, row, columnsOf);
            const names = Object.keys(row);
            if (!batch || batch.table !== table || batch.names.join() !== names.join() || batch.rows.length >= 200) {
              await flush();
              batch = { table, names, rows: [] };
            }
            batch.rows.push(names.map((c) => cast(table, c, row[c]!)));
          }
          await flush();
          for (const measure of MEASURE_IMPORTED) await client.query(measure);
          // Numbering continues after the imported rows.
          for (const table of NUMBERED_TABLES) {
            await client.query(`SELECT setval(pg_get_serial_sequence('${table}', 'seq'), GREATEST((SELECT COALESCE(MAX(seq), 0) FROM ${table}), 1), (SELECT COUNT(*) > 0 FROM ${table}))`);
          }
          return counts;
        });
      },
    },
    async close() {
      await pool.end();
    },
  }, probeWrite(runner));
}
