import "server-only";
import pg from "pg";
import { GenserveError } from "../errors";
import { driveAsync, POSTGRES_DIALECT, type StoreRunner } from "./runner";

/**
 * Errors that mean "the database cannot be reached or stopped serving", not "this statement is
 * wrong": connection failures and the server shutting down (SQLSTATE classes 08 and 57P).
 */
function unavailable(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  if (typeof e?.code === "string" && (/^08/.test(e.code) || /^57P0[123]$/.test(e.code) || /^E(CONNREFUSED|CONNRESET|HOSTUNREACH|NOTFOUND|TIMEDOUT|PIPE)$/.test(e.code))) return true;
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(e?.message ?? "");
}

const storageUnavailable = () =>
  new GenserveError("storage_unavailable", { detail: "The database is not reachable right now; retry shortly.", headers: { "Retry-After": "5" } });

export interface PostgresRunner extends StoreRunner {
  /** One statement on the pool. */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>>;
  /** Runs `work` on one client in one transaction (all or nothing). */
  transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /** Answers 503 `storage_unavailable` for a database that cannot be reached. */
  guard<T>(work: () => Promise<T>): Promise<T>;
}

/**
 * The store's runner on PostgreSQL (see runner.ts): statements on the pool, transactions on one
 * client, announcements by NOTIFY and LISTEN on a connection of their own to `url`.
 */
export function postgresRunner(pool: pg.Pool, url: string): PostgresRunner {
  const guard = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      throw unavailable(error) ? storageUnavailable() : error;
    }
  };
  const query = <R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[] = []) => guard(() => pool.query<R>(sql, params));
  const transaction = <T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> =>
    guard(async () => {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const result = await work(client);
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    });
  return {
    dialect: POSTGRES_DIALECT,
    query,
    transaction,
    guard,
    all: async <R>(sql: string, params: unknown[]) => (await query(sql, params)).rows as R[],
    run: async (sql, params) => (await query(sql, params)).rowCount ?? 0,
    async write(sql, params, options) {
      if (!options?.announce) return (await query(sql, params)).rowCount ?? 0;
      // Wrapped below as a CTE: a statement of its own RETURNING or a trailing semicolon would break it.
      if (/\bRETURNING\b|;\s*$/i.test(sql)) throw new Error("An announced write must be one statement without RETURNING");
      // The write and its announcement in one statement: NOTIFY is sent when it commits, and only
      // when it changed a row (the HAVING leaves no row to compute pg_notify for otherwise).
      const n = params.length;
      const { rows } = await query<{ n: number }>(
        `WITH changed AS (${sql} RETURNING 1) SELECT count(*) AS n, pg_notify($${n + 1}, $${n + 2}) FROM changed HAVING count(*) > 0`,
        [...params, options.announce.channel, options.announce.payload],
      );
      return Number(rows[0]?.n ?? 0);
    },
    listen: (channel, onMessage, onReconnect) => listenChannel(url, channel, onMessage, onReconnect),
    transact: (work, options) =>
      transaction(async (client) => {
        if (typeof options?.lock === "number") await client.query("SELECT pg_advisory_xact_lock($1)", [options.lock]);
        else if (options?.lock !== undefined) await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [options.lock]);
        return driveAsync(work(), async (s) => {
          const result = await client.query(s.sql, s.params);
          return s.rows ? result.rows : (result.rowCount ?? 0);
        });
      }),
  };
}

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
