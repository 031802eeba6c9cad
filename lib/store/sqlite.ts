import "server-only";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import { MIGRATIONS } from "./migrations";
import { checkTransferRow, ImportTargetNotEmpty, pagedRows, upgradedRows } from "./table-transfer";
import { sealStoredSecrets } from "./keys-store";
import { subStores } from "./sub-stores";
import { secretBox } from "./secret-box";
import { loadSecretsKey } from "./secrets-key";
import { sqliteRunner } from "./sqlite-runner";
import { groupCommit } from "./group-commit";
import { guardStorage, probeWrite } from "./storage-faults";
import { MEASURE_IMPORTED } from "./thread-reads";
import type { Store, TransferRow, TransferTable } from "./store-types";

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

  // The writes every run makes (admission, its end, its callback's attempts, its stream) share commits under load.
  const commits = groupCommit(db);
  const runner = sqliteRunner(db, commits);

  return guardStorage({
    kind: "sqlite",
    ...subStores(runner, box),
    // Applied when the store opened (SQLite's write lock serialises processes that open it together);
    // what is left is sealing signing secrets stored in plain text (a synchronous transaction too).
    async migrate() {
      await sealStoredSecrets(runner, box);
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
