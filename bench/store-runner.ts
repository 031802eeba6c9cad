/**
 * node bin/bench.mjs bench/store-runner.ts — the CPU a statement costs through the store's runner (runner.ts,
 * sqlite-runner.ts) against a prepared statement called directly, on SQLite (the backend of
 * bench:overhead). Results: docs/benchmarks.md.
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { openSqliteStore } from "../lib/store/sqlite";
import Database from "better-sqlite3";
import { groupCommit } from "../lib/store/group-commit";
import { sqliteRunner } from "../lib/store/sqlite-runner";

const dir = mkdtempSync(path.join(os.tmpdir(), "store-micro-"));
const store = openSqliteStore(dir);
await store.keys.insert({ id: "k1", name: "k", hash: "h1", prefix: "p", admin: false, role: "editor" as const, projectId: "prj_default", createdAt: "2026-01-01T00:00:00Z", lastUsedAt: null, revokedAt: null, webhookSecret: "s", limits: { rpm: null, tpm: null, concurrency: null, workflows: null, budgetDailyNanos: null, budgetMonthlyNanos: null } });
await store.close();
// The file again on a connection of its own, as sqlite.ts opens it.
const db = new Database(path.join(dir, "genserve.sqlite"));
const direct = db.prepare("SELECT * FROM api_keys WHERE hash = ?");
const runner = sqliteRunner(db, groupCommit(db));
const N = 30_000;
const time = async (name: string, f: () => unknown) => {
  for (let i = 0; i < 5_000; i++) await f();
  const c = process.cpuUsage();
  for (let i = 0; i < N; i++) await f();
  const u = process.cpuUsage(c); const ns = ((u.user + u.system) * 1000) / N;
  console.log(`${name}: ${(ns / 1000).toFixed(2)} µs CPU per call`);
};
for (let round = 0; round < 3; round++) {
  await time("direct prepared statement (before: sqlite.ts's stmt.keyByHash)", async () => direct.get("h1"));
  await time("runner.all ($1 -> @p1, prepared once, named params)", () => runner.all("SELECT * FROM api_keys WHERE hash = $1", ["h1"]));
  await time("runner.transact (a Tx generator in BEGIN IMMEDIATE)", () => runner.transact(function* () { return (yield { sql: "SELECT * FROM api_keys WHERE hash = $1", params: ["h1"], rows: true }) as unknown[]; }));
}
