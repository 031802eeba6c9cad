/**
 * npm run bench:overhead — what genserve adds to a model call, against a stateless gateway, in one run.
 *
 * A fast fake OpenAI-compatible upstream runs in its own process. The same chat completion is
 * requested:
 * - directly from the upstream (the baseline every "added" figure subtracts);
 * - through Portkey's open-source gateway (`@portkey-ai/gateway`, a stateless proxy, on Node);
 * - from a bare route handler in genserve that returns a constant (`/healthz`, served the way the
 *   API is: the floor every API request pays; it calls no upstream, so its "added" is its own
 *   latency);
 * - through genserve's three operations, each a real run: key checked against the store, admitted
 *   and recorded, the object validated, the callback signed, queued and delivered to a receiver;
 * - through the OpenAI-compatible endpoint (`/v1/chat/completions`, response_format json_schema):
 *   the same object run as generate/object, without a callback, answered as a chat completion.
 *
 * Sequential: every target in turn, in a new order each round, one request at a time (so drift on
 * this shared machine spreads over all of them alike), the next one sent once the last run's
 * callback has arrived (a callback still being delivered would otherwise land on the next target's
 * time); p50 and p99. generate/object and generate/text are also read against the upstream
 * answering the very requests genserve sends for them. Concurrent: `BENCH_CLIENTS` (32) clients per
 * target, each sending its next request when its last one answered, for `BENCH_SECONDS` (10). CPU
 * per request is read from /proc for the serving process, the upstream and this process (the
 * clients and the receiver). `BENCH_PROFILE=dir` writes a CPU profile of genserve (`--cpu-prof`)
 * into dir. Results: docs/benchmarks.md.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import os from "node:os";
import { INVOICE_SCHEMA, testConfig } from "../test/helpers/config";
import { startGenserve, tempDir, writeConfig } from "../test/helpers/genserve";
import { seededRandom, shuffled } from "../test/helpers/random";
import { startReceiver, waitUntil } from "../test/helpers/receiver";
import { cpuOf, freePort, machineBusy, percentile, startUpstreamProcess, stopOnExit, waitForPort } from "./harness";

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 400);
const PROFILE_DIR = process.env.BENCH_PROFILE;
const ONLY = process.env.BENCH_ONLY?.split(",");

async function startPortkey(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const entry = createRequire(import.meta.url).resolve("@portkey-ai/gateway/build/start-server.js");
  const child = stopOnExit(spawn(process.execPath, [entry, `--port=${port}`, "--headless"], { stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, NODE_ENV: "production" } }));
  await waitForPort(port, child, "Portkey's gateway");
  return { url: `http://127.0.0.1:${port}`, child };
}

const upstream = await startUpstreamProcess();
const receiver = await startReceiver();
const portkey = await startPortkey();
const dataDir = tempDir("genserve-bench-");
const genserve = await startGenserve({
  configFile: writeConfig(tempDir(), testConfig(upstream.url, "network:\n  allowPrivate: true\n")),
  dataDir,
  logLevel: "warn",
  nodeArgs: PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : [],
});
stopOnExit(genserve.process);
const key = genserve.adminKey!;

const INPUT = "Invoice INV-1: one chair, 120.50 EUR";
const SCHEMA = INVOICE_SCHEMA;
const chat = JSON.stringify({ model: "fake-free", messages: [{ role: "user", content: INPUT }] });
const json = { "content-type": "application/json" };
const gs = { ...json, "api-key": key };

interface Target {
  name: string;
  /** The process serving it (for CPU per request), if not the upstream's. */
  pid?: number;
  /** An SSE stream, read to its `done` event. */
  stream?: boolean;
  /** Its run sends a callback to the receiver. */
  callback?: boolean;
  send(): Promise<Response>;
}

const OBJECT_BASELINE = "upstream directly, genserve's object request";
const TEXT_BASELINE = "upstream directly, genserve's text request";
const OPENAI_TARGET = "genserve /v1/chat/completions json_schema (OpenAI-compatible)";
const post = (url: string, headers: Record<string, string>, body: string) => () => fetch(url, { method: "POST", headers, body });
const targets: Target[] = [
  { name: "upstream directly", pid: upstream.child.pid, send: post(`${upstream.url}/chat/completions`, { ...json, authorization: "Bearer sk-test" }, chat) },
  {
    name: "Portkey gateway",
    pid: portkey.child.pid,
    send: post(`${portkey.url}/v1/chat/completions`, { ...json, authorization: "Bearer sk-test", "x-portkey-provider": "openai", "x-portkey-custom-host": upstream.url }, chat),
  },
  { name: "bare route handler (/healthz)", pid: genserve.process.pid, send: () => fetch(`${genserve.url}/healthz`) },
  {
    name: "genserve generate/text",
    pid: genserve.process.pid,
    callback: true,
    send: post(`${genserve.url}/api/v1/generate/text`, gs, JSON.stringify({ input: INPUT, type: "event", workflowSlug: "no-retry", callback: { url: receiver.url } })),
  },
  {
    name: "genserve generate/object",
    pid: genserve.process.pid,
    callback: true,
    send: post(`${genserve.url}/api/v1/generate/object`, gs, JSON.stringify({ input: INPUT, type: "event", workflowSlug: "no-retry", schema: SCHEMA, callback: { url: receiver.url } })),
  },
  {
    // The same run as generate/object (workflow, input, schema; so the same upstream request), asked
    // by an OpenAI client: no callback (the OpenAI shape has none), answered as a chat completion.
    name: OPENAI_TARGET,
    pid: genserve.process.pid,
    send: post(
      `${genserve.url}/v1/chat/completions`,
      { ...json, authorization: `Bearer ${key}` },
      JSON.stringify({ model: "no-retry", messages: [{ role: "user", content: INPUT }], response_format: { type: "json_schema", json_schema: { name: "invoice", schema: SCHEMA, strict: true } } }),
    ),
  },
  {
    name: "genserve stream/object",
    pid: genserve.process.pid,
    stream: true,
    send: post(`${genserve.url}/api/v1/stream/object`, { ...gs, accept: "text/event-stream" }, JSON.stringify({ input: INPUT, workflowSlug: "no-retry", schema: SCHEMA })),
  },
].filter((t) => !ONLY || t.name === "upstream directly" || ONLY.some((o) => t.name.includes(o)));

async function once(target: Target): Promise<number> {
  const started = performance.now();
  const res = await target.send();
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${target.name}: HTTP ${res.status} ${text.slice(0, 300)}`);
  if (target.stream && !text.includes("event: done")) throw new Error(`${target.name}: the stream did not finish: ${text.slice(-300)}`);
  return performance.now() - started;
}

// The upstream answering the very requests genserve sends for generate/object (its schema in
// `response_format`) and generate/text (its system prompt): the baselines genserve's own share of
// each is read against, so object and text compare on their own upstream times.
for (const [name, baseline] of [
  ["genserve generate/object", OBJECT_BASELINE],
  ["genserve generate/text", TEXT_BASELINE],
] as const) {
  const target = targets.find((t) => t.name === name);
  if (!target) continue;
  await once(target);
  const sent = await (await fetch(`${upstream.url}/__last-request`)).text();
  targets.splice(1, 0, { name: baseline, pid: upstream.child.pid, send: post(`${upstream.url}/chat/completions`, { ...json, authorization: "Bearer sk-test" }, sent) });
}

// Warm-up: JIT, compiled routes, pooled connections; and a check that every target answers.
for (let i = 0; i < 100; i++) for (const t of targets) await once(t);

// One request at a time, each alone on the machine: after a run with a callback, the next request
// waits until the callback has arrived (and a few ms more for every target alike), so no target is
// measured while the one before it is still delivering. Each round takes the targets in a new order
// (shuffled from a fixed seed), so every target follows every other about equally often: with one
// fixed order, the request right after generate/text's callback was measured 0.5-0.8 ms slower
// whichever target it was (the upstream alone too), and that was charged to generate/object.
const sequential = new Map<string, number[]>(targets.map((t) => [t.name, []]));
const random = seededRandom(1);
for (let i = 0; i < SEQUENTIAL; i++) {
  for (const t of shuffled(random, targets)) {
    const delivered = receiver.received.length;
    sequential.get(t.name)!.push(await once(t));
    if (t.callback) await waitUntil(() => receiver.received.length > delivered, "the callback");
    await new Promise((r) => setTimeout(r, 5));
  }
}
receiver.received.length = 0;

interface Load {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  firstError?: string;
  cpuMsPerRequest: number;
  /** CPU ms per request of the upstream's process and of this one (the clients and the callback receiver). */
  upstreamCpuMs: number;
  clientCpuMs: number;
  /** The share of the machine's cores busy meanwhile (everything on it). */
  busy: number;
  /** For a target with callbacks: the share of its runs' callbacks that arrived within the load, and how long after it the last one did. */
  callbacks?: { duringLoad: number; lastAfterMs: number };
}

async function load(target: Target): Promise<Load> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const end = performance.now() + SECONDS * 1000;
  const cpu0 = target.pid ? cpuOf(target.pid) : 0;
  const upstream0 = cpuOf(upstream.child.pid!);
  const self0 = process.cpuUsage();
  const busy0 = machineBusy();
  const received0 = receiver.received.length;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < end) {
        try {
          latencies.push(await once(target));
        } catch (error) {
          errors++;
          firstError ??= (error as Error).message;
        }
      }
    }),
  );
  const finished = performance.now();
  const elapsed = (finished - started) / 1000;
  const busy = (machineBusy() - busy0) / elapsed / os.availableParallelism();
  const n = Math.max(1, latencies.length);
  // A callback still on its way when the load ends is work the throughput did not show: say how
  // much, and count the CPU spent on the runs until the last of their callbacks has arrived.
  let callbacks: Load["callbacks"];
  if (target.callback) {
    const duringLoad = (receiver.received.length - received0) / n;
    await waitUntil(() => receiver.received.length - received0 >= latencies.length, "the load's callbacks", 60_000);
    callbacks = { duringLoad, lastAfterMs: performance.now() - finished };
  }
  const cpu = target.pid ? cpuOf(target.pid) - cpu0 : 0;
  const self = process.cpuUsage(self0);
  return {
    rps: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
    firstError,
    cpuMsPerRequest: (cpu * 1000) / n,
    upstreamCpuMs: target.pid === upstream.child.pid ? 0 : ((cpuOf(upstream.child.pid!) - upstream0) * 1000) / n,
    clientCpuMs: (self.user + self.system) / 1000 / n,
    busy,
    callbacks,
  };
}

const loads = new Map<string, Load>();
for (const t of targets) {
  loads.set(t.name, await load(t));
  await new Promise((r) => setTimeout(r, 1000)); // let callbacks drain before the next target
}

const direct = sequential.get("upstream directly")!;
const d50 = percentile(direct, 50);
const d99 = percentile(direct, 99);
const f = (n: number, digits = 1) => n.toFixed(digits);
const lines = [
  `Machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "?"}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; ${new Date().toISOString().slice(0, 10)}. Sequential: ${SEQUENTIAL} requests per target, in a new order each round; concurrent: ${CLIENTS} clients for ${SECONDS} s per target.`,
  "",
  "| target | p50 ms | p99 ms | added p50 | added p99 | concurrent req/s | concurrent p50 / p99 ms | errors | CPU ms per request (serving process) | CPU ms per request: upstream / clients and receiver | machine busy | callbacks in the load / last one after |",
  "|---|---|---|---|---|---|---|---|---|---|---|---|",
  ...targets.map((t) => {
    const s = sequential.get(t.name)!;
    const l = loads.get(t.name)!;
    const floor = t.name.startsWith("bare");
    const added = t.name.startsWith("upstream directly") ? ["—", "—"] : floor ? [f(percentile(s, 50), 2), f(percentile(s, 99), 2)] : [f(percentile(s, 50) - d50, 2), f(percentile(s, 99) - d99, 2)];
    return `| ${t.name} | ${f(percentile(s, 50), 2)} | ${f(percentile(s, 99), 2)} | ${added[0]} | ${added[1]} | ${f(l.rps)} | ${f(l.p50)} / ${f(l.p99)} | ${l.errors} | ${f(l.cpuMsPerRequest, 2)} | ${t.pid === upstream.child.pid ? "—" : f(l.upstreamCpuMs, 2)} / ${f(l.clientCpuMs, 2)} | ${f(100 * l.busy, 0)}% | ${l.callbacks ? `${f(100 * l.callbacks.duringLoad, 1)}% / ${f(l.callbacks.lastAfterMs, 0)} ms` : "—"} |`;
  }),
];
const objectBaseline = sequential.get(OBJECT_BASELINE);
const textBaseline = sequential.get(TEXT_BASELINE);
if (objectBaseline && textBaseline) {
  const own = (name: string, base: number[], p: number) => percentile(sequential.get(name)!, p) - percentile(base, p);
  const object = (p: number) => own("genserve generate/object", objectBaseline, p);
  const text = (p: number) => own("genserve generate/text", textBaseline, p);
  lines.push(
    "",
    `Each over the upstream answering its own request: generate/object added p50 ${f(object(50), 2)} against generate/text ${f(text(50), 2)} ms (object costs ${f(object(50) - text(50), 2)} ms more); p99 ${f(object(99), 2)} against ${f(text(99), 2)} ms.`,
  );
}
const openai = sequential.get(OPENAI_TARGET);
const native = sequential.get("genserve generate/object");
if (openai && native) {
  const [o50, n50, o99, n99] = [percentile(openai, 50), percentile(native, 50), percentile(openai, 99), percentile(native, 99)];
  const [oLoad, nLoad] = [loads.get(OPENAI_TARGET)!, loads.get("genserve generate/object")!];
  lines.push(
    "",
    `OpenAI-compatible object run against the native generate/object (same upstream request; the native one also signs and delivers a callback): p50 ${f(o50, 2)} against ${f(n50, 2)} ms (${f(o50 - n50, 2)}), p99 ${f(o99, 2)} against ${f(n99, 2)} ms; concurrent ${f(oLoad.rps)} against ${f(nLoad.rps)} req/s, CPU ${f(oLoad.cpuMsPerRequest, 2)} against ${f(nLoad.cpuMsPerRequest, 2)} ms per request.`,
  );
}
const errors = [...loads].filter(([, l]) => l.firstError).map(([name, l]) => `- ${name}: ${l.firstError}`);
process.stdout.write(`${lines.join("\n")}\n${errors.length ? `\nErrors:\n${errors.join("\n")}\n` : ""}`);

await genserve.stop();
portkey.child.kill("SIGTERM");
upstream.child.kill("SIGTERM");
await receiver.close();
if (PROFILE_DIR) process.stdout.write(`\nCPU profile of genserve written to ${PROFILE_DIR}\n`);
process.exit(0);
