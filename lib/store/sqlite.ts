import "server-only";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import { MIGRATIONS, NEXT_QUEUED_RUN } from "./migrations";
import { admit, CONCURRENCY_METER, mergeCharges, settled, type MeterRow } from "./meters";
import { keyPatch, runEnded, THREAD_INSERT, toCatalog, toEvent, toKey, toRun, toStranded, warningsJson, type CatalogRow, type EventRow, type KeyRow, type RunRow } from "./rows";
import { checkTransferRow, ImportTargetNotEmpty, pagedRows, upgradedRows } from "./table-transfer";
import { usageReport, usageStatements } from "./usage-report";
import { catalogStore } from "./catalog-store";
import { eventsStore } from "./events-store";
import { storeHealth } from "./health-store";
import { idempotencyStore } from "./idempotency-store";
import { keysStore, sealStoredSecrets } from "./keys-store";
import { secretBox } from "./secret-box";
import { loadSecretsKey } from "./secrets-key";
import { auditStore } from "./audit-store";
import { runReads } from "./runs-store";
import { streamReads } from "./streams-store";
import { threadsStore } from "./threads-store";
import { usageStore } from "./usage-store";
import { sqliteRunner } from "./sqlite-runner";
import { evaluationStore } from "./evaluations-store";
import { groupCommit } from "./group-commit";
import { inboxStore } from "./inboxes";
import { lifecycleStore } from "./lifecycle-store";
import { cappedWrite, quotaCount, quotaUsage } from "./quotas";
import { guardStorage, probeWrite } from "./storage-faults";
import { listRuns } from "./run-list";
import { MEASURE_IMPORTED, threadReads } from "./thread-reads";
import type { Admission, CatalogKind, MeterCharge, NewRun, Settlement, Store, TransferRow, TransferTable } from "./store-types";

export const SQLITE_FILE = "genserve.sqlite";
/** The checkpoint worker, relative to the package root (plain JavaScript, loaded as it is). */
export const CHECKPOINT_WORKER_FILE = path.join("lib", "store", "checkpoint-worker.mjs");

export interface SqliteOptions {
  /** The checkpoint worker's file (`CHECKPOINT_WORKER_FILE` under the package): a server passes it, short CLI commands need not. */
  checkpointWorker?: string;
  /** The key sealing signing secrets (secrets-key.ts); absent, the key file in `dataDir` (made on first start). */
  secretsKey?: Buffer;
}

/** SQLite's own default: a commit that leaves the WAL longer than this many pages checkpoints it. */
const AUTOCHECKPOINT_PAGES = 1000;
/**
 * With the worker: it checkpoints about as many pages at a time as SQLite itself would, looking
 * every 25 ms to every second. A commit still checkpoints if the WAL outgrows the backstop: under a
 * steady load the worker keeps it far below, but after a quiet spell it looks only once a second,
 * and a burst written flat out in that second can reach the backstop once before it catches up.
 */
const CHECKPOINT = { frames: AUTOCHECKPOINT_PAGES, minMs: 25, maxMs: 1_000 };
const BACKSTOP_PAGES = 8 * AUTOCHECKPOINT_PAGES;

/**
 * Opens (creating if needed) the SQLite database in `dataDir` and applies pending migrations.
 * WAL mode and a busy timeout let CLI commands write while a server uses the same file.
 */
export function openSqliteStore(dataDir: string, options: SqliteOptions = {}): Store {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, SQLITE_FILE);
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  migrate(db);
  const checkpointer = options.checkpointWorker ? checkpointInThread(db, file, options.checkpointWorker) : null;
  const box = secretBox(options.secretsKey ?? loadSecretsKey(null, { postgres: false, dataDir }));

  const streamListeners = new Set<(runId: string) => void>();
  const cancelListeners = new Set<(runId: string) => void>();
  // The writes every run makes (admission, its end, its callback's attempts, its stream) share commits under load.
  const commits = groupCommit(db);
  const write = commits.write;
  const stmt = {
    streamInsert: db.prepare<[string, number, string, number, string]>("INSERT INTO stream_events (run_id, seq, event, final, created_at) VALUES (?, ?, ?, ?, ?)"),
    meterGet: db.prepare<[string, string], MeterRow>("SELECT meter, used, reserved FROM key_usage WHERE key_id = ? AND meter = ?"),
    meterReserve: db.prepare<[string, string, number, string]>(
      `INSERT INTO key_usage (key_id, meter, used, reserved, updated_at) VALUES (?, ?, 0, ?, ?)
       ON CONFLICT (key_id, meter) DO UPDATE SET reserved = reserved + excluded.reserved, updated_at = excluded.updated_at`,
    ),
    meterSettle: db.prepare<[number, number, string, string, string]>("UPDATE key_usage SET reserved = reserved - ?, used = used + ?, updated_at = ? WHERE key_id = ? AND meter = ?"),
    reservationAdd: db.prepare<[string, string, string, number]>(
      "INSERT INTO usage_reservations (run_id, key_id, meter, amount) VALUES (?, ?, ?, ?) ON CONFLICT (run_id, meter) DO UPDATE SET amount = amount + excluded.amount",
    ),
    reservationsOf: db.prepare<[string], { key_id: string; meter: string; amount: number }>("SELECT key_id, meter, amount FROM usage_reservations WHERE run_id = ?"),
    reservationDelete: db.prepare<[string, string]>("DELETE FROM usage_reservations WHERE run_id = ? AND meter = ?"),
    runNextWithSlot: db.prepare<[], RunRow & { request_json: string; concurrency: number | null }>(`${NEXT_QUEUED_RUN.replace("$SELECT", "r.*, k.concurrency AS concurrency")} LIMIT 1`),
    keyServed: db.prepare<[string, string]>("UPDATE api_keys SET queue_served_at = ? WHERE id = ?"),
    eventInsert: db.prepare(
      `INSERT INTO events (id, run_id, key_id, url, headers, payload, status, attempts, next_attempt_at, created_at, updated_at, traceparent, lease_until)
       VALUES (@id, @runId, @keyId, @url, @headers, @payload, 'pending', 0, @nextAttemptAt, @createdAt, @createdAt, @traceparent, @leaseUntil)`,
    ),
    runInsert: db.prepare(
      `INSERT INTO runs (id, operation, workflow_slug, key_id, status, input, schema_json, context_slugs, attachments,
                         callback, model_tag, created_at, updated_at, request_json, context_chunks,
                         workflow_version, context_versions, prompt_hash, schema_hash, prompt_tokens, output_token_limit,
                         lease_owner, lease_until, traceparent, evaluation_id, workflow_label, draft)
       VALUES (@id, @operation, @workflowSlug, @keyId, @status, @input, @schema, @contextSlugs, @attachments,
               @callback, @modelTag, @createdAt, @createdAt, @request, @contextChunks,
               @workflowVersion, @contextVersions, @promptHash, @schemaHash, @promptTokens, @outputTokenLimit,
               @leaseOwner, @leaseUntil, @traceparent, @evaluationId, @workflowLabel, @draft)`,
    ),
    runRequeue: db.prepare<[string, string]>("UPDATE runs SET status = 'queued', lease_owner = NULL, lease_until = NULL, updated_at = ? WHERE id = ?"),
    runClaim: db.prepare<[string, string, string, string]>(
      "UPDATE runs SET status = 'running', async_starts = async_starts + 1, lease_owner = ?, lease_until = ?, updated_at = ? WHERE id = ? AND status = 'queued'",
    ),
    runFinish: db.prepare(
      `UPDATE runs SET status = @status, output_json = @output, error_json = @error, model_name = @modelName, request_json = NULL, decoding = @decoding, warnings_json = @warnings,
              model_tag = @modelTag, input_tokens = @inputTokens, output_tokens = @outputTokens, cost = @cost,
              duration_ms = @durationMs, attempts = @attempts, finished_at = @finishedAt, updated_at = @finishedAt,
              lease_owner = NULL, lease_until = NULL, pace = @pace
       WHERE id = @id AND status IN ('running', 'queued') AND (@owner IS NULL OR lease_owner = @owner)`,
    ),
    runStatus: db.prepare<[string], { status: string }>("SELECT status FROM runs WHERE id = ?"),
    runCancel: db.prepare<[string, string]>("UPDATE runs SET cancel_requested_at = COALESCE(cancel_requested_at, ?) WHERE id = ? AND status IN ('queued', 'running')"),
  };

  const insertRun = (run: NewRun) =>
    stmt.runInsert.run({
      ...run,
      status: run.status ?? "running",
      contextChunks: run.contextChunks && run.contextChunks.length > 0 ? JSON.stringify(run.contextChunks) : null,
      workflowVersion: run.workflowVersion ?? null,
      contextVersions: run.contextVersions ? JSON.stringify(run.contextVersions) : null,
      promptHash: run.promptHash ?? null,
      schemaHash: run.schemaHash ?? null,
      promptTokens: run.promptTokens ?? null,
      outputTokenLimit: run.outputTokenLimit ?? null,
      request: run.request === undefined ? null : JSON.stringify(run.request),
      leaseOwner: run.lease?.owner ?? null,
      leaseUntil: run.lease?.until ?? null,
      traceparent: run.traceparent ?? null,
      evaluationId: run.evaluationId ?? null,
      workflowLabel: run.workflowLabel ?? null,
      draft: run.draft ? JSON.stringify(run.draft) : null,
      schema: run.schema === null ? null : JSON.stringify(run.schema),
      contextSlugs: JSON.stringify(run.contextSlugs),
      attachments: JSON.stringify(run.attachments),
      callback: run.callback === null ? null : JSON.stringify(run.callback),
    });

  /** Reserves `charges` for a run, all or none (inside a transaction). */
  const reserve = (runId: string, keyId: string, charges: readonly MeterCharge[], at: string): Admission => {
    const merged = mergeCharges(charges);
    const rows = merged.map((c) => stmt.meterGet.get(keyId, c.meter)).filter((r): r is MeterRow => r !== undefined);
    const admission = admit(merged, rows);
    if (!admission.ok) return admission;
    for (const c of merged) {
      stmt.meterReserve.run(keyId, c.meter, c.amount, at);
      stmt.reservationAdd.run(runId, keyId, c.meter, c.amount);
    }
    return admission;
  };

  /** Settles a run's reservations (`only`: just that meter) to what it used (inside a transaction). */
  const settleRun = (runId: string, settle: Settlement, at: string, only?: string) => {
    for (const r of stmt.reservationsOf.all(runId)) {
      if (only !== undefined && r.meter !== only) continue;
      stmt.meterSettle.run(r.amount, settled(r, settle), at, r.key_id, r.meter);
      stmt.reservationDelete.run(runId, r.meter);
    }
  };

  const runner = sqliteRunner(db, commits);
  const evaluations = evaluationStore(runner);
  const { catalogVersions, ...lifecycle } = lifecycleStore(runner);

  return guardStorage({
    kind: "sqlite",
    ...evaluations,
    ...lifecycle,
    // Applied when the store opened (SQLite's write lock serialises processes that open it together);
    // what is left is sealing signing secrets stored in plain text (a synchronous transaction too).
    async migrate() {
      await sealStoredSecrets(runner, box);
    },
    keys: keysStore(runner, box),
    audit: auditStore(runner),
    runs: {
      async insert(run: NewRun, charges = []) {
        return write((): Admission => {
          const admission = reserve(run.id, run.keyId, charges, run.createdAt);
          if (admission.ok) insertRun(run);
          return admission;
        });
      },
      async reserve(runId, keyId, charges, at) {
        return write(() => {
          // A run that has ended (left behind at its deadline, say) reserves nothing more: nothing would settle it.
          if (stmt.runStatus.get(runId)?.status !== "running") throw runEnded(runId);
          return reserve(runId, keyId, charges, at);
        });
      },
      async finish(id, outcome, event, owner, settle = {}) {
        return write(() => {
          const changed = stmt.runFinish.run({
            id,
            owner: owner ?? null,
            ...outcome,
            output: outcome.output === null ? null : JSON.stringify(outcome.output),
            error: outcome.error === null ? null : JSON.stringify(outcome.error),
            warnings: warningsJson(outcome.warnings),
            pace: outcome.pace ? JSON.stringify(outcome.pace) : null,
          }).changes;
          if (changed === 0) return false;
          if (event) stmt.eventInsert.run({ ...event, headers: JSON.stringify(event.headers), traceparent: event.traceparent ?? null, leaseUntil: event.leaseUntil ?? null });
          settleRun(id, settle, outcome.finishedAt ?? new Date().toISOString());
          return true;
        });
      },
      ...runReads(runner),
      async requeue(id, at) {
        db.transaction(() => {
          stmt.runRequeue.run(at, id);
          settleRun(id, {}, at, CONCURRENCY_METER);
        }).immediate();
      },
      async requestCancel(id, at) {
        const changed = (await write(() => stmt.runCancel.run(at, id))).changes > 0;
        // One process owns the file: its own listeners are everyone who can be told.
        if (changed) for (const listener of cancelListeners) listener(id);
        return changed;
      },
      async listenCancels(onCancel) {
        cancelListeners.add(onCancel);
        return { close: async () => void cancelListeners.delete(onCancel) };
      },
      async claimQueued(at, lease) {
        return db
          .transaction(() => {
            const row = stmt.runNextWithSlot.get();
            if (!row) return null;
            if (row.concurrency !== null && !reserve(row.id, row.key_id, [{ meter: CONCURRENCY_METER, amount: 1, limit: row.concurrency }], at).ok) return null;
            if (stmt.runClaim.run(lease.owner, lease.until, at, row.id).changes === 0) return null;
            stmt.keyServed.run(at, row.key_id);
            return { ...toRun({ ...row, status: "running" }), request: JSON.parse(row.request_json) as unknown };
          })
          .immediate();
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
        await write(() => {
          for (const e of events) stmt.streamInsert.run(runId, e.seq, e.event, e.final ? 1 : 0, at);
        });
        // One process owns the file: its own listeners are everyone who can be told.
        for (const listener of streamListeners) listener(runId);
      },
      ...streamReads(runner),
      async listen(onAppended) {
        streamListeners.add(onAppended);
        return { close: async () => void streamListeners.delete(onAppended) };
      },
    },
    transfer: {
      rows(table) {
        return pagedRows(table, async (sql, params) => db.prepare<unknown[], TransferRow>(sql).all(...params));
      },
      async load(source) {
        const columns = new Map<TransferTable, ReadonlySet<string>>();
        const columnsOf = (table: TransferTable) => {
          let known = columns.get(table);
          if (!known) columns.set(table, (known = new Set(db.prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('${table}')`).all().map((c) => c.name))));
          return known;
        };
        const inserts = new Map<string, Database.Statement<unknown[]>>();
        const counts: Record<string, number> = {};
        // One transaction over the whole import (this process is its only writer meanwhile).
        db.exec("BEGIN IMMEDIATE");
        try {
          if (db.prepare("SELECT 1 FROM api_keys UNION ALL SELECT 1 FROM runs LIMIT 1").get()) throw new ImportTargetNotEmpty();
          for await (const { table, row } of upgradedRows(source)) {
            checkTransferRow(table, row, columnsOf);
            const names = Object.keys(row);
            const values = names.map((n) => (typeof row[n] === "boolean" ? (row[n] ? 1 : 0) : row[n]));
            const shape = `${table}(${names.join(",")})`;
            let insert = inserts.get(shape);
            if (!insert) inserts.set(shape, (insert = db.prepare(`INSERT INTO ${table} (${names.map((n) => `"${n}"`).join(", ")}) VALUES (${names.map(() => "?").join(", ")})`)));
            insert.run(...values);
            counts[table] = (counts[table] ?? 0) + 1;
          }
          for (const measure of MEASURE_IMPORTED) db.exec(measure);
          db.exec("COMMIT");
        } catch (error) {
          db.exec("ROLLBACK");
          throw error;
        }
        return counts;
      },
    },
    ...storeHealth(runner),
    pool() {
      return null;
    },
    async close() {
      // Writes still waiting for their turn's transaction are committed, not lost with the connection.
      if (db.open) commits.flush();
      await checkpointer?.stop();
      if (db.open) db.close();
    },
  }, probeWrite(runner));
}

/**
 * Moves WAL checkpoints off the event loop: a worker thread checkpoints (checkpoint-worker.mjs),
 * and this connection's own automatic checkpoint is raised to a backstop it reaches only if the
 * worker falls behind. Should the worker fail or exit, the connection checkpoints at SQLite's
 * default threshold again, as it did without one.
 */
function checkpointInThread(db: Database.Database, file: string, workerFile: string): { stop(): Promise<void> } {
  db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  const worker = new Worker(workerFile, { workerData: { file, ...CHECKPOINT } });
  worker.unref();
  const exited = new Promise<void>((resolve) => {
    const fallBack = () => {
      if (db.open) db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
      resolve();
    };
    worker.once("error", fallBack);
    worker.once("exit", fallBack);
  });
  return {
    async stop() {
      // Held (unlike while it runs) until it has closed its connection: the process waits for it.
      worker.ref();
      worker.postMessage("stop");
      await exited;
    },
  };
}

function migrate(db: Database.Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  // IMMEDIATE takes the write lock first, so two processes starting together apply each migration once.
  const apply = db.transaction((migration: (typeof MIGRATIONS)[number]) => {
    const done = db.prepare("SELECT 1 FROM schema_migrations WHERE version = ?").get(migration.version);
    if (done) return;
    db.exec(migration.sql);
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
      migration.version,
      migration.name,
      new Date().toISOString(),
    );
  });
  for (const migration of MIGRATIONS) apply.immediate(migration);
}
