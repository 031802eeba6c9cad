import { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { storeContract } from "./contract";
import { evaluationContract } from "./contract-evaluations";
import { projectContract } from "./contract-projects";
import { NO_LIMITS } from "../domain/key-limits";
import { MIGRATIONS } from "./migrations";
import { parseSecretsKey, SECRETS_KEY_FILE } from "./secrets-key";
import { CHECKPOINT_WORKER_FILE, openSqliteStore, SQLITE_FILE } from "./sqlite";
import type { Store } from "./store-types";

// The storage contract on a real SQLite file; the second handle is another connection to the same
// file, as a CLI command next to the server would have.
let dir = "";
const stores = {
  first: async () => openSqliteStore((dir = mkdtempSync(path.join(os.tmpdir(), "genserve-store-")))),
  second: async () => openSqliteStore(dir),
  // An export moves sealed secrets as they are: the store it is imported into has the same key.
  another: async () => openSqliteStore(mkdtempSync(path.join(os.tmpdir(), "genserve-store-")), { secretsKey: parseSecretsKey(readFileSync(path.join(dir, SECRETS_KEY_FILE), "utf8"), "the test's key") }),
  upgraded: async (version: number, seed: readonly string[]) => {
    // An install of an older version: its migrations applied as the store applies them, its rows, then the store opened (migrating the rest).
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "genserve-store-"));
    const db = new Database(path.join(dataDir, SQLITE_FILE));
    db.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)");
    for (const migration of MIGRATIONS.filter((m) => m.version <= version)) {
      db.exec(migration.sql);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(migration.version, migration.name, new Date().toISOString());
    }
    for (const sql of seed) db.exec(sql);
    db.close();
    return openSqliteStore(dataDir);
  },
};
storeContract("SQLite", stores);
evaluationContract("SQLite", stores);
projectContract("SQLite", stores);

describe("SQLite indexes", () => {
  it("serve the lookups for queued, running and stranded runs, due events and an evaluation's runs from partial indexes, and threads' sizes from theirs", () => {
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
    // A thread's size, a page's sizes and a run's history are summed from the index, never from the messages (issue 31).
    expect(plan("SELECT COUNT(*), SUM(bytes) FROM thread_messages WHERE key_id = ? AND thread_id = ?", "k", "t")).toContain("COVERING INDEX thread_messages_thread");
    expect(plan("SELECT seq, SUM(bytes) OVER (ORDER BY seq DESC) FROM thread_messages WHERE key_id = ? AND thread_id = ?", "k", "t")).toContain("COVERING INDEX thread_messages_thread");
    db.close();
  });
});

describe("SQLite checkpoints", () => {
  const at = new Date(Date.UTC(2026, 10, 25)).toISOString();
  /** Writes `kib` KiB of runs (in 16 KiB inputs) through the store. */
  async function fill(store: Store, kib: number) {
    await store.keys.insert({ id: "key_c", name: "k", hash: "c".repeat(64), prefix: "gs_k", admin: false, role: "editor" as const, projectId: "prj_default", createdAt: at, lastUsedAt: null, revokedAt: null, webhookSecret: "whsec_test", limits: NO_LIMITS });
    for (let i = 0; i < kib / 16; i++) {
      const run = { id: `run_${i}`, operation: "generate.text" as const, workflowSlug: "w", keyId: "key_c", input: "x".repeat(16 * 1024), schema: null, contextSlugs: [], attachments: [], callback: null, modelTag: "m", createdAt: at };
      await store.runs.insert(run);
    }
  }
  const sizes = (dataDir: string) => {
    const file = path.join(dataDir, SQLITE_FILE);
    return { db: statSync(file).size, wal: existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0 };
  };
  const until = async (check: () => boolean) => {
    for (let waited = 0; !check(); waited += 20) {
      if (waited > 5_000) throw new Error("timed out");
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it("are made by the worker thread, well before the WAL would have reached SQLite's own threshold", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "genserve-store-"));
    const store = openSqliteStore(dataDir, { checkpointWorker: path.resolve(CHECKPOINT_WORKER_FILE) });
    const before = sizes(dataDir).db;
    // 512 KiB: about 130 pages, far below the 1,000 at which a commit would checkpoint by itself.
    await fill(store, 512);
    await until(() => sizes(dataDir).db >= before + 512 * 1024);
    await store.close();
    // The worker closed its connection first: the server's, the last one, removed the WAL.
    expect(existsSync(path.join(dataDir, `${SQLITE_FILE}-wal`))).toBe(false);
  });

  it("fall back to SQLite's own when the worker cannot run", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "genserve-store-"));
    const store = openSqliteStore(dataDir, { checkpointWorker: path.join(dataDir, "missing-worker.mjs") });
    await new Promise((r) => setTimeout(r, 500)); // the worker fails to load
    const before = sizes(dataDir).db;
    // 6 MiB: past SQLite's threshold (about 4 MiB), under the backstop the worker would have set (32 MiB).
    await fill(store, 6 * 1024);
    expect(sizes(dataDir).db).toBeGreaterThan(before + 4 * 1024 * 1024);
    await store.close();
  });
});
