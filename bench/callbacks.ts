/**
 * npm run bench:callbacks — callback delivery throughput and latency to a local receiver.
 * Real SQLite outbox, real delivery worker (signing, HTTP, delivery log), receiver in another
 * thread. (1) throughput: 3,000 events queued at once, delivered events per second;
 * (2) latency: 200 events/s for 10 s, p50/p99 from the run's end (event queued) to receipt.
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import pino from "pino";
import { runEvent } from "../lib/delivery/events";
import { DeliveryWorker, queueEvent } from "../lib/delivery/worker";
import { createKey } from "../lib/keys/api-keys";
import { openSqliteStore } from "../lib/store/sqlite";

const receiverCode = `
const http = require("node:http");
const { parentPort } = require("node:worker_threads");
const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    parentPort.postMessage({ id: req.headers["webhook-id"], at: Date.now() });
    res.writeHead(204).end();
  });
});
server.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: server.address().port }));
`;

const receiver = new Worker(receiverCode, { eval: true });
const received = new Map<string, number>();
let notify: (() => void) | null = null;
const port = await new Promise<number>((resolve) =>
  receiver.on("message", (m: { port?: number; id?: string; at?: number }) => {
    if (m.port) resolve(m.port);
    else {
      received.set(m.id!, m.at!);
      notify?.();
    }
  }),
);

const store = openSqliteStore(mkdtempSync(path.join(os.tmpdir(), "genserve-bench-")));
const { record: key } = await createKey(store, { name: "bench", admin: false });
const worker = new DeliveryWorker(store, pino({ level: "silent" }), { allowPrivate: true, scheduleMs: [5_000], timeoutMs: 10_000, concurrency: 16, pollMs: 1_000, publicUrl: "http://127.0.0.1:1", owner: "bench" });
worker.start();

const metadata = { runId: "", cost: "0", model: { name: "m", tag: "t" }, durationInMs: 1, inputTokens: 1, outputTokens: 1 };
const queued = new Map<string, number>();
async function queue(n: number): Promise<void> {
  const at = new Date();
  const callback = { url: `http://127.0.0.1:${port}/hook` };
  const event = runEvent({
    runId: `run_bench_${n}`,
    keyId: key.id,
    operation: "generate.object",
    workflowSlug: "bench",
    callback,
    outcome: { object: { n, text: "x".repeat(200) } },
    metadata: { ...metadata, runId: `run_bench_${n}` },
    at,
  });
  // As the pipeline does (lib/runs/outcome.ts): the run is stored, then its outcome is written with
  // the event through queueEvent.
  await store.runs.insert({ id: `run_bench_${n}`, operation: "generate.object", workflowSlug: "bench", keyId: key.id, input: "x", schema: null, contextSlugs: [], attachments: [], callback, modelTag: "t", createdAt: at.toISOString() });
  const outcome = { status: "succeeded" as const, output: null, error: null, modelName: null, modelTag: null, decoding: null, warnings: [], inputTokens: 0, outputTokens: 0, cost: "0", durationMs: 0, attempts: 1, finishedAt: at.toISOString() };
  const stored = await queueEvent(worker, event, (held) => store.runs.finish(`run_bench_${n}`, outcome, held));
  if (!stored) throw new Error(`run_bench_${n} was not finished: its event is not queued`);
  queued.set(event.id, Date.now());
}

const waitFor = (count: number) =>
  new Promise<void>((resolve) => {
    notify = () => received.size >= count && resolve();
    notify();
  });

// (1) Throughput.
const burst = 3_000;
const t0 = Date.now();
for (let i = 0; i < burst; i++) await queue(i);
await waitFor(burst);
const throughput = burst / ((Date.now() - t0) / 1000);

// (2) Latency at 200 events/s.
received.clear();
queued.clear();
const rate = 200;
const seconds = 10;
const start = Date.now();
for (let i = 0; i < rate * seconds; i++) {
  const due = start + (i * 1000) / rate;
  const wait = due - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  await queue(burst + i);
}
await waitFor(rate * seconds);
const latencies = [...queued].map(([id, at]) => received.get(id)! - at).sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;

console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, node ${process.version}, ${new Date().toISOString().slice(0, 10)}`);
console.log(`| measurement | result | target |`);
console.log(`|---|---|---|`);
console.log(`| throughput, ${burst} events queued at once | ${throughput.toFixed(0)} events/s | ≥ 1,000 events/s |`);
console.log(`| end of run → delivered at ${rate} events/s, p50 | ${pct(50)} ms | |`);
console.log(`| end of run → delivered at ${rate} events/s, p99 | ${pct(99)} ms | < 100 ms |`);
await worker.stop(1_000);
await store.close();
await receiver.terminate();
