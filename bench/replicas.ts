/**
 * npm run bench:replicas — generate/text throughput and latency against a fast fake upstream:
 * one process on SQLite, one replica on PostgreSQL, two replicas on PostgreSQL (the load spread
 * round-robin, as a load balancer would). Every request is a real run: authenticated against the
 * store, admitted, recorded, its callback queued and delivered to a local receiver.
 *
 * Then the cost of sharing a stream between replicas: a stream/object run on replica A followed at
 * the same time through GET /runs/{id}/stream on replica B (PostgreSQL LISTEN/NOTIFY); the delay of
 * each item on B behind A.
 *
 * Everything shares this machine's cores: the load generator, the fake upstream, the receiver,
 * PostgreSQL and the genserve processes. Results: docs/benchmarks.md.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { createParser } from "eventsource-parser";
import pg from "pg";
import { createClient } from "redis";
import { INVOICE_SCHEMA, testConfig } from "../test/helpers/config";
import { startFakeUpstream } from "../test/helpers/fake-upstream";
import { tempDir, writeConfig } from "../test/helpers/genserve";
import { freshDatabase, postgresAvailable, TEST_SECRETS_ENV } from "../test/helpers/postgres";
import { startReceiver } from "../test/helpers/receiver";
import { cpuOf, percentile } from "./harness";

const ROOT = path.resolve(import.meta.dirname, "..");
const BIN = path.join(ROOT, "bin", "genserve.mjs");
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
/** BENCH_ONLY=sqlite: the SQLite process alone (to compare a change against a baseline checkout). */
const ONLY_SQLITE = process.env.BENCH_ONLY === "sqlite";

if (!(await postgresAvailable())) throw new Error("bench:replicas needs PostgreSQL (GENSERVE_TEST_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/test)");

const upstream = await startFakeUpstream();
const receiver = await startReceiver();
// Replicas on PostgreSQL share the key that seals signing secrets (set for SQLite too, where it is used the same way).
const config = testConfig(upstream.url, "network:\n  allowPrivate: true\nsecurity:\n  secretsKey:\n    env: GENSERVE_TEST_SECRETS_KEY\n");

interface Server {
  url: string;
  key: string | null;
  process: ChildProcess;
}

/** `genserve serve` as an operator runs it (log level warn), on SQLite in `dataDir` or on DATABASE_URL. */
async function serve(dataDir: string, databaseUrl?: string): Promise<Server> {
  const configFile = writeConfig(tempDir(), config);
  const child = spawn(process.execPath, [BIN, "serve", "--config", configFile, "--data", dataDir, "--port", "0", "--log-level", "warn"], {
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", ...TEST_SECRETS_ENV, ...(databaseUrl && { DATABASE_URL: databaseUrl }) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`genserve did not start:\n${output}`)), 120_000);
    child.stdout!.on("data", () => {
      const match = /genserve listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        setTimeout(() => resolve(match[1]!), 100);
      }
    });
    child.on("exit", (code) => reject(new Error(`genserve exited with ${code}:\n${output}`)));
  });
  return { url, key: /^\s+(gs_[A-Za-z0-9_-]{43})$/m.exec(output)?.[1] ?? null, process: child };
}

const stop = (servers: Server[]) =>
  Promise.all(servers.map((s) => new Promise<void>((resolve) => (s.process.exitCode !== null ? resolve() : (s.process.once("exit", () => resolve()), s.process.kill("SIGTERM"))))));

const body = JSON.stringify({ input: "Invoice INV-1: one chair, 120.50 EUR", type: "event", workflowSlug: "no-retry", callback: { url: receiver.url } });

async function oneRun(url: string, key: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${url}/api/v1/generate/text`, { method: "POST", headers: { "content-type": "application/json", "api-key": key }, body });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
  return performance.now() - started;
}

/** CPU seconds of every PostgreSQL server process (the backends serving genserve among them). */
function postgresCpu(): number {
  const pids = execFileSync("pgrep", ["-f", "postgres"]).toString().trim().split("\n").map(Number).filter(Boolean);
  return pids.reduce((sum, pid) => sum + cpuOf(pid), 0);
}
const ownCpu = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
};


/** `CLIENTS` clients, each sending the next request when its last one answered, for `SECONDS`; round-robin over the servers. */
interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  sequentialP50: number;
  /** CPU milliseconds per run under load: genserve (all replicas), PostgreSQL, this process (load, upstream, receiver). */
  cpuPerRun: { genserve: number; postgres: number; harness: number };
}

async function load(servers: Server[], key: string): Promise<LoadResult> {
  // Warm-up: compiled routes, pooled connections.
  for (let i = 0; i < 100; i++) await oneRun(servers[i % servers.length]!.url, key);
  const sequential: number[] = [];
  for (let i = 0; i < 200; i++) sequential.push(await oneRun(servers[i % servers.length]!.url, key));
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const end = performance.now() + SECONDS * 1000;
  const cpu0 = { genserve: servers.reduce((t, s) => t + cpuOf(s.process.pid!), 0), postgres: postgresCpu(), harness: ownCpu() };
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < end) {
        const server = servers[next++ % servers.length]!;
        try {
          latencies.push(await oneRun(server.url, key));
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const runs = latencies.length;
  const cpuPerRun = {
    genserve: ((servers.reduce((t, s) => t + cpuOf(s.process.pid!), 0) - cpu0.genserve) * 1000) / runs,
    postgres: ((postgresCpu() - cpu0.postgres) * 1000) / runs,
    harness: ((ownCpu() - cpu0.harness) * 1000) / runs,
  };
  return { rps: runs / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors, sequentialP50: percentile(sequential, 50), cpuPerRun };
}

/** Per-item delay of a follower on replica B behind the streaming client on replica A. */
async function streamShare(a: Server, b: Server, key: string): Promise<{ items: number; p50: number; p99: number; max: number }> {
  const delays: number[] = [];
  let items = 0;
  for (let round = 0; round < 5; round++) {
    upstream.reply({ content: JSON.stringify({ number: "INV-1", total: 120.5, currency: "EUR", note: "x".repeat(400) }), chunkSize: 8, chunkDelayMs: 10 });
    const arrivals = { a: new Map<string, number>(), b: new Map<string, number>() };
    const read = async (res: Response, into: Map<string, number>) => {
      const parser = createParser({ onEvent: (e) => void (e.id && into.set(e.id, performance.now())) });
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
      }
    };
    const res = await fetch(`${a.url}/api/v1/stream/object`, {
      method: "POST",
      headers: { "content-type": "application/json", "api-key": key, accept: "text/event-stream" },
      body: JSON.stringify({ input: "Invoice INV-1", workflowSlug: "no-retry", schema: { ...INVOICE_SCHEMA, properties: { ...INVOICE_SCHEMA.properties, note: { type: "string" } } } }),
    });
    const runId = res.headers.get("x-run-id")!;
    const follower = fetch(`${b.url}/api/v1/runs/${runId}/stream`, { headers: { "api-key": key, accept: "text/event-stream" } });
    await Promise.all([read(res, arrivals.a), follower.then((r) => read(r, arrivals.b))]);
    for (const [id, at] of arrivals.b) {
      const first = arrivals.a.get(id);
      if (first !== undefined && Number(id) > 3) delays.push(at - first); // the follower's first items are replayed from the table
    }
    items += arrivals.b.size;
  }
  return { items, p50: percentile(delays, 50), p99: percentile(delays, 99), max: Math.max(...delays) };
}

/**
 * The two ways to tell other replicas that a stream has new events, measured alone: the events
 * are written to PostgreSQL in both (a client may resume minutes later on any replica), then
 * announced either by NOTIFY in the same transaction, or by a Redis PUBLISH after the commit.
 * From the start of the write to the listener receiving the announcement, one at a time.
 */
async function announceLatency(databaseUrl: string): Promise<Record<string, { p50: number; p99: number }> | string> {
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const ROUNDS = 2_000;
  const writer = new pg.Client({ connectionString: databaseUrl });
  const listener = new pg.Client({ connectionString: databaseUrl });
  await writer.connect();
  await listener.connect();
  await writer.query("CREATE TABLE bench_events (run_id TEXT, seq INTEGER, event TEXT, PRIMARY KEY (run_id, seq))");
  let wake: (() => void) | null = null;
  listener.on("notification", () => wake?.());
  await listener.query("LISTEN bench");
  const row = (i: number) => ["run_bench", i, JSON.stringify({ kind: "item", text: "x".repeat(64) })];
  const measure = async (announce: (i: number) => Promise<void>) => {
    const times: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const received = new Promise<void>((resolve) => (wake = resolve));
      const t0 = performance.now();
      await announce(i);
      await received;
      times.push(performance.now() - t0);
    }
    return { p50: percentile(times, 50), p99: percentile(times, 99) };
  };
  const out: Record<string, { p50: number; p99: number }> = {};
  out["PostgreSQL: INSERT and NOTIFY in one statement (genserve)"] = await measure(async (i) => {
    await writer.query("WITH written AS (INSERT INTO bench_events VALUES ($1, $2, $3) RETURNING 1) SELECT pg_notify('bench', 'run_bench'), (SELECT count(*) FROM written)", row(i));
  });
  await writer.query("DELETE FROM bench_events");
  out["PostgreSQL: BEGIN, INSERT, NOTIFY, COMMIT"] = await measure(async (i) => {
    await writer.query("BEGIN");
    await writer.query("INSERT INTO bench_events VALUES ($1, $2, $3)", row(i));
    await writer.query("SELECT pg_notify('bench', 'run_bench')");
    await writer.query("COMMIT");
  });
  const publisher = createClient({ url: redisUrl });
  const subscriber = createClient({ url: redisUrl });
  try {
    await Promise.all([publisher.connect(), subscriber.connect()]);
  } catch (error) {
    await Promise.allSettled([writer.end(), listener.end()]);
    return `Redis not reachable at ${redisUrl} (${(error as Error).message}): only PostgreSQL measured`;
  }
  await subscriber.subscribe("bench", () => wake?.());
  await writer.query("DELETE FROM bench_events");
  out["PostgreSQL INSERT, then Redis PUBLISH"] = await measure(async (i) => {
    await writer.query("INSERT INTO bench_events VALUES ($1, $2, $3)", row(i));
    await publisher.publish("bench", "run_bench");
  });
  out["Redis PUBLISH alone (no durable write: not enough for resume)"] = await measure(async () => void (await publisher.publish("bench", "run_bench")));
  await Promise.allSettled([publisher.quit(), subscriber.quit(), writer.end(), listener.end()]);
  return out;
}

const results: Record<string, LoadResult> = {};

{
  const sqlite = await serve(path.join(tempDir(), "data"));
  results["SQLite, 1 process"] = await load([sqlite], sqlite.key!);
  await stop([sqlite]);
}
if (ONLY_SQLITE) {
  const r = results["SQLite, 1 process"]!;
  process.stdout.write(`SQLite, 1 process: ${r.rps.toFixed(1)} runs/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, sequential p50 ${r.sequentialP50.toFixed(1)} ms, genserve CPU ${r.cpuPerRun.genserve.toFixed(2)} ms/run\n`);
  process.exit(0);
}
let share: Awaited<ReturnType<typeof streamShare>>;
{
  const db = await freshDatabase();
  const one = await serve(path.join(tempDir(), "data"), db.url);
  results["PostgreSQL, 1 replica"] = await load([one], one.key!);
  await stop([one]);
  await db.drop();
}
{
  const db = await freshDatabase();
  const first = await serve(path.join(tempDir(), "data"), db.url);
  const second = await serve(path.join(tempDir(), "data"), db.url);
  const key = first.key ?? second.key!;
  results["PostgreSQL, 2 replicas"] = await load([first, second], key);
  share = await streamShare(first, second, key);
  await stop([first, second]);
  await db.drop();
}
let announce: Awaited<ReturnType<typeof announceLatency>>;
{
  const db = await freshDatabase();
  announce = await announceLatency(db.url);
  await db.drop();
}

const base = results["PostgreSQL, 1 replica"]!;
const sqlite = results["SQLite, 1 process"]!;
const two = results["PostgreSQL, 2 replicas"]!;
const f = (n: number) => n.toFixed(1);
const lines = [
  `Machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "?"}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; ${new Date().toISOString().slice(0, 10)}. ${CLIENTS} clients for ${SECONDS} s each.`,
  "",
  "| setup | runs/s | p50 ms | p99 ms | errors | sequential p50 ms | CPU ms per run: genserve / PostgreSQL / harness |",
  "|---|---|---|---|---|---|---|",
  ...Object.entries(results).map(
    ([name, r]) => `| ${name} | ${f(r.rps)} | ${f(r.p50)} | ${f(r.p99)} | ${r.errors} | ${f(r.sequentialP50)} | ${f(r.cpuPerRun.genserve)} / ${f(r.cpuPerRun.postgres)} / ${f(r.cpuPerRun.harness)} |`,
  ),
  "",
  `2 replicas / 1 replica: ${(two.rps / base.rps).toFixed(2)}× (target ≥ 1.3×). PostgreSQL / SQLite, 1 process: ${(base.rps / sqlite.rps).toFixed(2)}× (target ≥ 0.8×).`,
  "",
  `Stream shared between replicas (LISTEN/NOTIFY, database.streamFlushMs 50): ${share!.items} items followed on replica B; delay behind replica A p50 ${f(share!.p50)} ms, p99 ${f(share!.p99)} ms, max ${f(share!.max)} ms.`,
  "",
  ...(typeof announce! === "string"
    ? [announce!]
    : ["| announcing a written event to other replicas | p50 ms | p99 ms |", "|---|---|---|", ...Object.entries(announce!).map(([name, r]) => `| ${name} | ${r.p50.toFixed(3)} | ${r.p99.toFixed(3)} |`)]),
];
process.stdout.write(`${lines.join("\n")}\n`);
await upstream.close();
await receiver.close();
process.exit(0);
