import "server-only";
import type Database from "better-sqlite3";

/**
 * Group commit for SQLite: the writes asked for in one turn of the event loop are applied together
 * in one `BEGIN IMMEDIATE` transaction, each inside its own savepoint, and committed once.
 *
 * Why: under load, most of a commit's cost is per transaction, not per row — taking the write
 * lock, writing the touched pages to the WAL (consecutive runs touch the same last pages of each
 * table and index), releasing the lock. Concurrent runs now share that cost.
 *
 * What a caller sees is unchanged: its promise settles only after the commit (or the failure) of
 * the transaction that holds its write, so once it resumes its write is durable (as durable as
 * `synchronous = NORMAL` makes any commit) and visible to every reader. A write that throws is
 * rolled back to its savepoint and only its caller sees the error; the others still commit. If the
 * commit itself fails, nothing of the batch was written and every caller in it gets the error.
 * Writes are applied in the order they were asked for.
 */
export interface GroupCommit {
  /** Queues `write` for this turn's transaction; settles once that transaction has committed or failed. */
  write<T>(write: () => T): Promise<T>;
  /** Commits what is queued now, without waiting for the turn to end (before the database closes). */
  flush(): void;
}

export function groupCommit(db: Database.Database): GroupCommit {
  interface Pending {
    write: () => unknown;
    resolve(value: unknown): void;
    reject(error: unknown): void;
  }
  let queue: Pending[] = [];
  const savepoint = db.prepare("SAVEPOINT grouped_write");
  const release = db.prepare("RELEASE grouped_write");
  const rollbackTo = db.prepare("ROLLBACK TO grouped_write");

  const flush = () => {
    const batch = queue;
    if (batch.length === 0) return;
    queue = [];
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      db.transaction(() => {
        if (batch.length === 1) {
          // Alone in its transaction: a failure rolls the transaction back, no savepoint needed.
          outcomes.push({ ok: true, value: batch[0]!.write() });
          return;
        }
        for (const { write } of batch) {
          savepoint.run();
          try {
            outcomes.push({ ok: true, value: write() });
            release.run();
          } catch (error) {
            // Some failures (a full disk, I/O) end the whole transaction: the batch fails with them.
            if (!db.inTransaction) throw error;
            // Otherwise the failed write leaves nothing behind, and the rest of the batch goes on.
            rollbackTo.run();
            release.run();
            outcomes.push({ ok: false, error });
          }
        }
      }).immediate();
    } catch (error) {
      // BEGIN or COMMIT failed, or a lone write did (the lock not had within the busy time-out, the disk): nothing was written.
      for (const pending of batch) pending.reject(error);
      return;
    }
    batch.forEach((pending, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) pending.resolve(outcome.value);
      else pending.reject(outcome.error);
    });
  };

  return {
    write: <T>(write: () => T) =>
      new Promise<T>((resolve, reject) => {
        if (queue.push({ write, resolve: resolve as (value: unknown) => void, reject }) === 1) setImmediate(flush);
      }),
    flush,
  };
}
