/**
 * npm run bench:store -- --before DIR — what a run's store writes cost, this
 * checkout's store against another checkout's (DIR, e.g. the commit before a store change), in one
 * process, rounds alternating: admission with two meters, ten stream batches of ten events, the end
 * with its callback event and the meters settled. SQLite: sequential (CPU per run) and 32 runs in
 * flight (the group commit); PostgreSQL (DATABASE_URL's server, a database of its own): sequential
 * (wall time per run: round trips) and 32 in flight (row locks under contention). Results: docs/benchmarks.md.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Store } from "../lib/store/store-types";

const beforeArg = process.argv.indexOf("--before");
if (beforeArg < 0) throw new Error("usage: bench/store-writes.ts --before DIR");
const ROOTS = { before: path.resolve(process.argv[beforeArg + 1]!), after: path.resolve(import.meta.dirname, "..") };
const RUNS = Number(process.env.BENCH_RUNS ?? 1_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PG_BASE = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

type Opened = { store: Store; close(): Promise<void> };
type Backend = (root: string, label: string) => Promise<Opened>;

const sqlite: Backend = async (root) => {
  const { openSqliteStore } = (await import(pathToFileURL(path.join(root, "lib/store/sqlite.ts")).href)) as typeof import("../lib/store/sqlite");
  const store = openSqliteStore(mkdtempSync(path.join(os.tmpdir(), "store-writes-")));
  return { store, close: () => store.close() };
};

const postgres: Backend = async (root, label) => {
  const { openPostgresStore } = (await import(pathToFileURL(path.join(root, "lib/store/postgres.ts")).href)) as typeof import("../lib/store/postgres");
  const name = `bench_store_writes_${label}_${process.pid}`;
  const admin = new URL(PG_BASE);
  const psql = (sql: string) => execFileSync("psql", [admin.href, "-qc", sql], { stdio: "ignore" });
  psql(`DROP DATABASE IF EXISTS ${name}`);
  psql(`CREATE DATABASE ${name}`);
  const url = new URL(PG_BASE);
  url.pathname = `/${name}`;
  const store = openPostgresStore(url.href, { max: 10, idleTimeoutMs: 10_000, connectionTimeoutMs: 5_000, secretsKey: randomBytes(32) });
  await store.migrate();
  return {
    store,
    async close() {
      await store.close();
      psql(`DROP DATABASE IF EXISTS ${name}`);
    },
  };
};

const NO_LIMITS = { rpm: null, tpm: null, concurrency: null, workflows: null, budgetDailyNanos: null, budgetMonthlyNanos: null };
const charges = [
  { meter: "rpm:1", amount: 1, limit: 1e12 },
  { meter: "daily:d", amount: 50, limit: 1e15 },
];

let sequence = 0;
/** One run's writes, as the pipeline makes them. */
async function oneRun(store: Store, keyId: string): Promise<void> {
  const id = `run_${process.pid}_${++sequence}`;
  const at = new Date().toISOString();
  const admission = await store.runs.insert(
    { id, operation: "stream.object", workflowSlug: "w", keyId, input: "x".repeat(200), schema: { type: "object" }, contextSlugs: [], attachments: [], callback: { url: "http://127.0.0.1/cb" }, modelTag: "m", createdAt: at },
    charges,
  );
  if (!admission.ok) throw new Error("refused");
  let seq = 0;
  for (let b = 0; b < 10; b++) {
    const events = Array.from({ length: 10 }, () => ({ seq: ++seq, event: `{"type":"object","text":"${"ab".repeat(8)}"}`, final: false }));
    await store.streams.append(id, events, at);
  }
  const ended = await store.runs.finish(
    id,
    { status: "succeeded", output: { a: 1 }, error: null, modelName: "m", modelTag: "m", decoding: null, inputTokens: 10, outputTokens: 20, cost: "0.0001", durationMs: 5, attempts: 1, finishedAt: at, warnings: [] },
    { id: `evt_${id}`, runId: id, keyId, url: "http://127.0.0.1/cb", headers: {}, payload: "{}", nextAttemptAt: at, createdAt: at },
    undefined,
    { daily: 40 },
  );
  if (!ended) throw new Error("not finished");
}

async function measure(open: Backend, root: string, label: string, inFlight: number): Promise<{ cpuUs: number; wallMs: number }> {
  const { store, close } = await open(root, label);
  const keyId = `key_${label}`;
  await store.keys.insert({ id: keyId, name: "bench", hash: `h_${label}`, prefix: "p", admin: false, createdAt: new Date().toISOString(), lastUsedAt: null, revokedAt: null, webhookSecret: "s", limits: NO_LIMITS, role: "editor", projectId: "prj_default" });
  for (let i = 0; i < 100; i++) await oneRun(store, keyId); // warm-up: statements prepared, JIT
  const cpu = process.cpuUsage();
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next++ < RUNS) await oneRun(store, keyId);
    }),
  );
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  await close();
  return { cpuUs: (used.user + used.system) / RUNS, wallMs: wallMs / RUNS };
}

console.log(`before: ${ROOTS.before}\nafter: ${ROOTS.after}\n${RUNS} runs per measurement, ${ROUNDS} rounds, load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`);
const cases: [string, Backend, number][] = [
  ["SQLite, sequential", sqlite, 1],
  ["SQLite, 32 in flight", sqlite, 32],
  ["PostgreSQL, sequential", postgres, 1],
  ["PostgreSQL, 32 in flight", postgres, 32],
];
for (const [name, open, inFlight] of cases) {
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating which goes first, so a trend in the machine's load falls on both.
    const order = round % 2 === 0 ? (["before", "after"] as const) : (["after", "before"] as const);
    const results: Record<string, { cpuUs: number; wallMs: number }> = {};
    for (const which of order) results[which] = await measure(open, ROOTS[which], which, inFlight);
    const b = results.before!;
    const a = results.after!;
    console.log(
      `${name}, round ${round + 1}: CPU µs per run ${b.cpuUs.toFixed(0)} → ${a.cpuUs.toFixed(0)} (${(a.cpuUs / b.cpuUs).toFixed(2)}×); wall ms per run ${b.wallMs.toFixed(3)} → ${a.wallMs.toFixed(3)} (${(a.wallMs / b.wallMs).toFixed(2)}×); load ${os.loadavg()[0]!.toFixed(1)}`,
    );
  }
}
