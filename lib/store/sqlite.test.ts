import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { storeContract } from "./contract";
import { openSqliteStore, SQLITE_FILE } from "./sqlite";

// The storage contract on a real SQLite file; the second handle is another connection to the same
// file, as a CLI command next to the server would have.
let dir = "";
storeContract("SQLite", {
  first: async () => openSqliteStore((dir = mkdtempSync(path.join(os.tmpdir(), "genserve-store-")))),
  second: async () => openSqliteStore(dir),
  another: async () => openSqliteStore(mkdtempSync(path.join(os.tmpdir(), "genserve-store-"))),
});

describe("SQLite indexes", () => {
  it("serve the lookups for queued, running and stranded runs, due events and an evaluation's runs from partial indexes", () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "genserve-store-"));
    openSqliteStore(dataDir);
    const db = new Database(path.join(dataDir, SQLITE_FILE), { readonly: true });
    // The shapes of the store's statements (lib/store/sqlite.ts) that run as the outbox and the queue are polled.
    const plan = (sql: string, ...params: unknown[]) =>
      db
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .all(...params)
        .map((row) => (row as { detail: string }).detail)
        .join("; ");
    expect(plan("SELECT COUNT(*) FROM runs WHERE status = 'queued'")).toContain("runs_queued");
    expect(plan("SELECT * FROM runs WHERE status = 'queued' ORDER BY id LIMIT 1")).toContain("runs_queued");
    expect(plan("SELECT * FROM runs WHERE status = 'running' AND (lease_until IS NULL OR lease_until < ?) ORDER BY id LIMIT ?", "t", 1)).toContain("runs_running");
    expect(plan("SELECT * FROM events WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?", "t", 1)).toContain("events_due");
    expect(plan("SELECT COUNT(*) FROM events WHERE status = 'pending'")).toContain("events_due");
    expect(plan("SELECT * FROM runs WHERE evaluation_id = ? ORDER BY id", "e")).toContain("runs_evaluation");
    db.close();
  });
});
