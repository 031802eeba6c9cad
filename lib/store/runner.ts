import "server-only";

/**
 * The one layer between the sub-stores (keys-store.ts, catalog-store.ts, …, written once) and the
 * two databases. Statements are hand-written SQL with `$1`-style placeholders that both SQLite and
 * PostgreSQL accept; what differs is hidden here:
 *
 * - how a statement is run (better-sqlite3, synchronous and prepared once; a pg pool);
 * - transactions: a sequence of statements is a generator (`Tx`) that yields each one and gets its
 *   result back. SQLite drives it synchronously inside one `BEGIN IMMEDIATE` (nothing else on the
 *   connection can land between its statements), or inside the group commit's shared transaction
 *   (`grouped`: the hot writes); PostgreSQL drives it on one pooled client in BEGIN … COMMIT, after an
 *   advisory lock on `lock` when given;
 * - the few fragments of SQL that differ (`Dialect`): row locks and `SKIP LOCKED` (SQLite has one
 *   writer and needs neither), lists and batches of rows as parameters, null-safe comparison,
 *   substring search;
 * - announcing a write to every process (`write` with `announce`, and `listen`): SQLite's listeners
 *   are in the one process that owns the file; PostgreSQL NOTIFYs in the write's own statement and
 *   LISTENs on a connection of its own.
 *
 * `RETURNING`, `ON CONFLICT … DO NOTHING / DO UPDATE`, window functions and `CAST(… AS TEXT)` are
 * written the same for both (SQLite ≥ 3.35). Booleans are bound as 1/0 (SQLite binds no booleans;
 * PostgreSQL reads '1' as true) and JSON columns are TEXT in both.
 */
export interface Dialect {
  readonly name: "sqlite" | "postgres";
  /** Appended to the sub-select that picks rows to claim: PostgreSQL skips rows another process is claiming. */
  readonly skipLocked: string;
  /** Appended to a SELECT whose rows the transaction goes on to change: PostgreSQL locks them. */
  readonly forUpdate: string;
  /** `column` is one of the values of the list parameter `param` (bound as `list(values)`). */
  inList(column: string, param: string): string;
  /** A list of values as `inList`'s parameter. */
  list(values: readonly unknown[]): unknown;
  /** `a` equals `b`, null equal to null. */
  same(a: string, b: string): string;
  /** Where `needle` occurs in `haystack` (1-based), 0 when it does not. */
  position(haystack: string, needle: string): string;
  /** `text` starts with `prefix`. */
  startsWith(text: string, prefix: string): string;
  /**
   * A table of rows given as one parameter (`param`, bound as `rows(values)`: an array of objects),
   * named `alias` with `columns` of the given SQL types: `SELECT … FROM ${rowsOf("$2", "x", …)}`.
   * One statement for a batch, in linear time, whatever its length.
   */
  rowsOf(param: string, alias: string, columns: Readonly<Record<string, "text" | "int" | "bigint">>): string;
  /** Rows of objects as `rowsOf`'s parameter. */
  rows(values: readonly Record<string, unknown>[]): unknown;
  /** `skipLocked` for a SELECT that joins: only the rows of `alias` are claimed. */
  skipLockedOf(alias: string): string;
  /** The SQL type a decimal string is cast to, to sum it. */
  readonly decimal: string;
}

/** One statement of a transaction; `rows`: its rows are wanted (else the count of rows it changed). */
export interface TxStatement {
  sql: string;
  params: unknown[];
  rows: boolean;
}

/** A transaction's statements, as a generator: `const rows = yield* all<Row>(sql, params)`. */
export type Tx<T> = Generator<TxStatement, T, unknown>;

/** Inside a `Tx`: the rows of a statement. */
export function* all<R>(sql: string, params: unknown[]): Tx<R[]> {
  return (yield { sql, params, rows: true }) as R[];
}

/** Inside a `Tx`: the number of rows a statement changed. */
export function* run(sql: string, params: unknown[]): Tx<number> {
  return (yield { sql, params, rows: false }) as number;
}

export interface TransactOptions {
  /**
   * What concurrent transactions serialise on (PostgreSQL: an advisory lock — a name is hashed with
   * `hashtext`, a number is the lock's key as it is; SQLite's write lock serialises anyway). A lock
   * that shipped as a number keeps it: replicas of two releases must take the same one.
   */
  lock?: string | number;
  /** SQLite: join this turn's group commit (writes every run makes); PostgreSQL: a transaction of its own. */
  grouped?: boolean;
}

/** What a write announces to every process once it has committed (`StoreRunner.write`). */
export interface Announcement {
  channel: string;
  payload: string;
}

/** Single statements: what a read (or a write atomic on its own) needs. */
export interface SqlRunner {
  /** Rows of a statement with `$1`-style placeholders. */
  all<R>(sql: string, params: unknown[]): Promise<R[]>;
  /** Rows changed by a statement. */
  run(sql: string, params: unknown[]): Promise<number>;
}

export interface StoreRunner extends SqlRunner {
  readonly dialect: Dialect;
  /** Runs `work`'s statements as one transaction: all of them, or none if one fails or `work` throws. */
  transact<T>(work: () => Tx<T>, options?: TransactOptions): Promise<T>;
  /**
   * One write statement (no `RETURNING` of its own); returns how many rows it changed. `grouped`:
   * SQLite joins this turn's group commit. `announce`: when it changed a row, every process
   * listening on the channel (`listen`) is told once it has committed — SQLite: this process's
   * listeners (one process owns the file); PostgreSQL: `NOTIFY` in the same statement, so an
   * announcement goes out exactly when the write commits and never for one that failed.
   */
  write(sql: string, params: unknown[], options?: { grouped?: boolean; announce?: Announcement }): Promise<number>;
  /**
   * Calls `onMessage(payload)` for each announcement on `channel`; `onReconnect` after the channel
   * was lost and is back (PostgreSQL: announcements meanwhile are gone).
   */
  listen(channel: string, onMessage: (payload: string) => void, onReconnect: () => void): Promise<{ close(): Promise<void> }>;
}

/** Calls the listeners of one process's channels (SQLite: the process that owns the file). */
export function localChannels(): Pick<StoreRunner, "listen"> & { tell(announcement: Announcement): void } {
  const channels = new Map<string, Set<(payload: string) => void>>();
  return {
    tell({ channel, payload }) {
      for (const listener of channels.get(channel) ?? []) listener(payload);
    },
    async listen(channel, onMessage) {
      let listeners = channels.get(channel);
      if (!listeners) channels.set(channel, (listeners = new Set()));
      listeners.add(onMessage);
      return { close: async () => void listeners.delete(onMessage) };
    },
  };
}

/** Drives `tx` with `step` running each statement synchronously (SQLite). */
export function driveSync<T>(tx: Tx<T>, step: (statement: TxStatement) => unknown): T {
  let next = tx.next();
  while (!next.done) next = tx.next(step(next.value));
  return next.value;
}

/** Drives `tx` with `step` running each statement (PostgreSQL). */
export async function driveAsync<T>(tx: Tx<T>, step: (statement: TxStatement) => Promise<unknown>): Promise<T> {
  let next = tx.next();
  while (!next.done) next = tx.next(await step(next.value));
  return next.value;
}

export const SQLITE_DIALECT: Dialect = {
  name: "sqlite",
  skipLocked: "",
  forUpdate: "",
  inList: (column, param) => `${column} IN (SELECT value FROM json_each(${param}))`,
  list: (values) => JSON.stringify(values),
  same: (a, b) => `${a} IS ${b}`,
  position: (haystack, needle) => `instr(${haystack}, ${needle})`,
  startsWith: (text, prefix) => `substr(${text}, 1, length(${prefix})) = ${prefix}`,
  rowsOf: (param, alias, columns) =>
    `(SELECT ${Object.keys(columns).map((c) => `json_extract(value, '$.${c}') AS ${c}`).join(", ")} FROM json_each(${param})) AS ${alias}`,
  rows: (values) => JSON.stringify(values),
  skipLockedOf: () => "",
  decimal: "REAL",
};

export const POSTGRES_DIALECT: Dialect = {
  name: "postgres",
  skipLocked: " FOR UPDATE SKIP LOCKED",
  forUpdate: " FOR UPDATE",
  inList: (column, param) => `${column} = ANY(${param})`,
  list: (values) => [...values],
  same: (a, b) => `${a} IS NOT DISTINCT FROM ${b}`,
  position: (haystack, needle) => `strpos(${haystack}, ${needle})`,
  startsWith: (text, prefix) => `starts_with(${text}, ${prefix})`,
  rowsOf: (param, alias, columns) =>
    `json_to_recordset(${param}::json) AS ${alias}(${Object.entries(columns).map(([c, type]) => `${c} ${type}`).join(", ")})`,
  rows: (values) => JSON.stringify(values),
  skipLockedOf: (alias) => ` FOR UPDATE OF ${alias} SKIP LOCKED`,
  decimal: "NUMERIC",
};
