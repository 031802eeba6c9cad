import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { guardStorage, isStorageFull } from "./storage-faults";
import type { Store } from "./store-types";

// A database that runs out of room for real: SQLite's max_page_count makes its writes fail with
// SQLITE_FULL exactly as a full disk does (the HTTP fault suite fills a real filesystem).
function boundedDatabase() {
  const db = new Database(path.join(mkdtempSync(path.join(os.tmpdir(), "genserve-full-")), "full.sqlite"));
  db.exec("CREATE TABLE t (v TEXT NOT NULL UNIQUE)");
  const pages = (db.pragma("page_count", { simple: true }) as number) + 2;
  db.pragma(`max_page_count = ${pages}`);
  return { db, grow: () => db.pragma(`max_page_count = ${pages + 1_000}`) };
}

describe("a full disk", () => {
  it("is told apart from other failures: SQLite's SQLITE_FULL and write I/O errors, ENOSPC, PostgreSQL's disk_full", () => {
    const { db } = boundedDatabase();
    let full: unknown;
    try {
      db.prepare("INSERT INTO t (v) VALUES (?)").run("x".repeat(100_000));
    } catch (error) {
      full = error;
    }
    expect(full).toMatchObject({ code: "SQLITE_FULL" });
    expect(isStorageFull(full)).toBe(true);
    for (const code of ["ENOSPC", "EDQUOT", "53100", "SQLITE_IOERR_WRITE", "SQLITE_IOERR_FSYNC"]) expect(isStorageFull({ code })).toBe(true);
    for (const code of ["SQLITE_CONSTRAINT_UNIQUE", "SQLITE_IOERR_READ", "SQLITE_BUSY", "23505", "08006", undefined]) expect(isStorageFull({ code })).toBe(false);
  });

  it("answers 503 storage_full with Retry-After from any operation, and keeps the store not ready until a write succeeds again", async () => {
    const { db, grow } = boundedDatabase();
    let probes = 0;
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
    const store = guardStorage(
      {
        kind: "sqlite",
        inboxes: {
          create: async (inbox: { id: string }) => void insert.run(inbox.id.repeat(20_000)),
          get: async (id: string) => (db.prepare("SELECT v FROM t WHERE v = ?").get(id) ? { id } : null),
        },
        ping: async () => void db.prepare("SELECT 1").get(),
      } as unknown as Store,
      async () => {
        probes++;
        db.prepare("INSERT INTO t (v) VALUES (?) ON CONFLICT (v) DO UPDATE SET v = excluded.v").run("p".repeat(20_000));
      },
    );
    await store.ping();
    expect(probes).toBe(0); // nothing failed: readiness writes nothing

    const refused = await store.inboxes.create({ id: "a" } as never).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({ code: "storage_full", status: 503, retryable: true, headers: { "Retry-After": expect.stringMatching(/^\d+$/) } });
    // Reads go on working on a full disk.
    expect(await store.inboxes.get("nothing")).toBeNull();
    await expect(store.ping()).rejects.toMatchObject({ code: "storage_full" });
    await expect(store.ping()).rejects.toMatchObject({ code: "storage_full" });

    grow(); // space freed
    await store.ping();
    const after = probes;
    await store.ping();
    expect(probes).toBe(after); // ready again: no more probing
    await store.inboxes.create({ id: "b" } as never);

    // Other failures are left as they are (an internal error, not a full disk).
    await expect(store.inboxes.create({ id: "b" } as never)).rejects.toMatchObject({ code: "SQLITE_CONSTRAINT_UNIQUE" });
    await store.ping();
    expect(probes).toBe(after);
  });
});
