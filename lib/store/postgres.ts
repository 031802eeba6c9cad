import "server-only";
import pg from "pg";
import { forPostgres, MIGRATIONS, NUMBERED_TABLES } from "./migrations";
import { checkTransferRow, ImportTargetNotEmpty, pagedRows, upgradedRows } from "./table-transfer";
import { sealStoredSecrets } from "./keys-store";
import { subStores } from "./sub-stores";
import { secretBox } from "./secret-box";
import { postgresRunner } from "./postgres-runner";
import { guardStorage, probeWrite } from "./storage-faults";
import { MEASURE_IMPORTED } from "./thread-reads";
import type { Store, TransferRow, TransferTable } from "./store-types";

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

  const runner = postgresRunner(pool, url);
  const box = secretBox(options.secretsKey);
  const { guard, query, transaction } = runner;


  return guardStorage({
    kind: "postgres",
    ...subStores(runner, box),
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
