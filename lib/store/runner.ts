import "server-only";
import type { AtomicRunner } from "./atomic";

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
 *   writer and needs neither), lists as parameters, null-safe comparison, substring search.
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

export interface StoreRunner extends AtomicRunner {
  readonly dialect: Dialect;
  /** Runs `work`'s statements as one transaction: all of them, or none if one fails or `work` throws. */
  transact<T>(work: () => Tx<T>, options?: TransactOptions): Promise<T>;
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
  decimal: "NUMERIC",
};
