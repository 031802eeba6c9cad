import "server-only";
import type Database from "better-sqlite3";
import type pg from "pg";
import type { SqlRunner } from "./evaluations-store";

/** One statement of an atomic sequence (`$1`-style placeholders, as `SqlRunner`'s). */
export interface AtomicStep {
  sql: string;
  params: unknown[];
  /** Looks at the statement's rows before the next one runs; throwing rolls every step back. */
  check?(rows: Record<string, unknown>[]): void;
}

export interface StepResult {
  rows: Record<string, unknown>[];
  /** Rows a statement that returns none changed. */
  changes: number;
}

/** A `SqlRunner` that can also run several statements as one. */
export interface AtomicRunner extends SqlRunner {
  /**
   * Runs `steps` in order in one transaction: all of them, or none when one fails or a check
   * throws. `lock` names what concurrent sequences serialise on: SQLite holds its one write lock
   * throughout anyway (BEGIN IMMEDIATE); PostgreSQL takes an advisory lock on the name first, so a
   * check reads what the previous holder committed (each statement sees the commits made before it
   * starts).
   */
  atomic(steps: readonly AtomicStep[], lock?: string): Promise<StepResult[]>;
}

/**
 * SQLite: the steps run synchronously inside one IMMEDIATE transaction, so nothing else on the
 * connection (another request's write) can land between them.
 */
export function sqliteAtomic(db: Database.Database, statement: (sql: string) => Database.Statement, named: (params: unknown[]) => Record<string, unknown>): AtomicRunner["atomic"] {
  const run = db.transaction((steps: readonly AtomicStep[]) =>
    steps.map((step): StepResult => {
      const prepared = statement(step.sql);
      const result = prepared.reader ? { rows: prepared.all(named(step.params)) as Record<string, unknown>[], changes: 0 } : { rows: [], changes: prepared.run(named(step.params)).changes };
      step.check?.(result.rows);
      return result;
    }),
  );
  return async (steps) => run.immediate(steps);
}

/** PostgreSQL: the steps in one transaction of `transaction`'s, after an advisory lock on `lock`. */
export function postgresAtomic(transaction: <T>(work: (client: pg.PoolClient) => Promise<T>) => Promise<T>): AtomicRunner["atomic"] {
  return (steps, lock) =>
    transaction(async (client) => {
      if (lock !== undefined) await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [lock]);
      const results: StepResult[] = [];
      for (const step of steps) {
        const { rows, rowCount } = await client.query(step.sql, step.params);
        const result = { rows: rows as Record<string, unknown>[], changes: rowCount ?? 0 };
        step.check?.(result.rows);
        results.push(result);
      }
      return results;
    });
}
