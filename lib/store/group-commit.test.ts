import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { groupCommit } from "./group-commit";

// Two connections to one real file: `db` writes through the group commit, `other` is another
// process's view of what has been committed.
let db: Database.Database;
let other: Database.Database;
beforeEach(() => {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "genserve-group-")), "db.sqlite");
  db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
  other = new Database(file);
});
afterEach(() => {
  db.close();
  other.close();
});

const committed = () => other.prepare("SELECT id FROM t ORDER BY id").all().map((r) => (r as { id: number }).id);
const insert = (id: number, v: string | null = "x") => () => db.prepare("INSERT INTO t (id, v) VALUES (?, ?)").run(id, v).changes;

describe("group commit", () => {
  it("commits the writes asked for in one turn together, and settles each only once committed", async () => {
    const { write } = groupCommit(db);
    const seenByOthers: number[][] = [];
    const writes = [write(insert(1)), write(insert(2)), write(() => (seenByOthers.push(committed()), insert(3)()))];
    // Nothing is written until the turn ends.
    expect(committed()).toEqual([]);
    await expect(Promise.all(writes)).resolves.toEqual([1, 1, 1]);
    // The third write ran inside the same transaction as the first two: they were not yet visible to others.
    expect(seenByOthers).toEqual([[]]);
    expect(committed()).toEqual([1, 2, 3]);
  });

  it("rolls back only a write that fails, and hands its error to its caller alone", async () => {
    const { write } = groupCommit(db);
    const results = await Promise.allSettled([
      write(insert(1)),
      write(() => {
        insert(2)();
        insert(3, null)(); // NOT NULL: fails after the write's first row went in
      }),
      write(insert(4)),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/NOT NULL/);
    expect(committed()).toEqual([1, 4]);
  });

  it("fails every write of a batch whose transaction cannot begin, and writes none of them", async () => {
    db.pragma("busy_timeout = 0");
    const { write } = groupCommit(db);
    other.exec("BEGIN IMMEDIATE"); // another process holds the write lock
    const results = await Promise.allSettled([write(insert(1)), write(insert(2))]);
    other.exec("ROLLBACK");
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/locked|busy/i);
    expect(committed()).toEqual([]);
    // The next turn starts afresh.
    await expect(write(insert(5))).resolves.toBe(1);
    expect(committed()).toEqual([5]);
  });

  it("fails a lone write alone and leaves nothing of it", async () => {
    const { write } = groupCommit(db);
    await expect(
      write(() => {
        insert(1)();
        throw new Error("changed its mind");
      }),
    ).rejects.toThrow("changed its mind");
    expect(committed()).toEqual([]);
  });

  it("applies writes in the order they were asked for, across turns", async () => {
    const { write } = groupCommit(db);
    const order: number[] = [];
    const first = [1, 2, 3].map((id) => write(() => (order.push(id), insert(id)())));
    await first[0];
    await Promise.all([4, 5].map((id) => write(() => (order.push(id), insert(id)()))));
    expect(order).toEqual([1, 2, 3, 4, 5]);
  });

  it("commits what is queued when flushed, so that closing the database loses none of it", async () => {
    const { write, flush } = groupCommit(db);
    const pending = [write(insert(1)), write(insert(2))];
    flush();
    db.close();
    await expect(Promise.all(pending)).resolves.toEqual([1, 1]);
    expect(committed()).toEqual([1, 2]);
    db = new Database(other.name); // for afterEach
  });
});
