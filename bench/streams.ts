/**
 * npm run bench:streams [-- --streams N] — many open stream/object requests waiting on a slow model.
 *
 * A fake OpenAI-compatible upstream (its own process) holds every request for `--wait-ms` (default
 * 120 s) before it answers, as a slow model does. N clients (default 2,000) open stream/object at
 * once; a stream is open when its response head (with X-Run-ID) has arrived. Measured: the time
 * until all are open, genserve's resident memory (RSS, /proc) before and while they are open, KB
 * per open stream, and `/healthz` latency (p50/p99 of 200 requests, one at a time) while they are.
 *
 * Each open stream holds two sockets in genserve (the client's and the upstream's): this machine's
 * limit of open files per process (`ulimit -n`) bounds N. Results: docs/benchmarks.md.
 */
import { readdirSync } from "node:fs";
import http from "node:http";
import { setMaxListeners } from "node:events";
import os from "node:os";
import { parseArgs } from "node:util";
import { INVOICE_SCHEMA } from "../test/helpers/config";
import { startGenserve, tempDir, writeConfig } from "../test/helpers/genserve";
import { cpuOf, percentile, rssMiB, startUpstreamProcess, stopOnExit } from "./harness";

const { values } = parseArgs({ args: process.argv.slice(3), options: { streams: { type: "string", default: "2000" }, "wait-ms": { type: "string", default: "120000" } } });
const STREAMS = Number(values.streams);
const WAIT_MS = Number(values["wait-ms"]);

/** V8's heap in use (live objects and garbage not yet collected), from genserve's own /metrics. */
const heapUsedMiB = async () => {
  const text = await (await fetch(`${genserve.url}/metrics`, { headers: { "api-key": key } })).text();
  return Number(/^genserve_process_nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1]) / 2 ** 20;
};

const upstream = await startUpstreamProcess(WAIT_MS);
// One model and one workflow whose deadline outlasts the wait: streams end when this benchmark
// leaves, not before.
const config = `
models:
  free: { provider: openai-compatible, baseURL: "${upstream.url}", model: fake-free }
workflows:
  wait: { model: free, retries: 0, timeoutMs: ${WAIT_MS + 60_000} }
network:
  allowPrivate: true
`;
const PROFILE_DIR = process.env.BENCH_PROFILE; // a CPU profile of genserve (--cpu-prof) into this directory
const HEAP_DIR = process.env.BENCH_HEAP;
const genserve = await startGenserve({
  configFile: writeConfig(tempDir(), config),
  dataDir: tempDir("genserve-bench-"),
  logLevel: "warn",
  nodeArgs: [
    ...(PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : []),
    // BENCH_HEAP=dir: heap snapshots of genserve before the streams open and while they are open.
    ...(HEAP_DIR ? ["--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${HEAP_DIR}`] : []),
  ],
});
const snapshot = async () => {
  if (!HEAP_DIR) return;
  const count = () => readdirSync(HEAP_DIR).filter((f) => f.endsWith(".heapsnapshot")).length;
  const had = count();
  genserve.process.kill("SIGUSR2");
  while (count() === had) await new Promise((r) => setTimeout(r, 500));
  await new Promise((r) => setTimeout(r, 20_000)); // written
};
stopOnExit(genserve.process);
const pid = genserve.process.pid!;
const key = genserve.adminKey!;

const body = JSON.stringify({ input: "Invoice INV-1: one chair, 120.50 EUR", workflowSlug: "wait", schema: INVOICE_SCHEMA });
const health = async (n: number) => {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const res = await fetch(`${genserve.url}/healthz`);
    await res.arrayBuffer();
    times.push(performance.now() - t);
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
};

await health(200); // warm-up
// A few streams opened and closed first: compiled code paths, pools and workers started.
{
  const warm = new AbortController();
  await Promise.all(Array.from({ length: 20 }, () => fetch(`${genserve.url}/api/v1/stream/object?cancelOnDisconnect=true`, { method: "POST", headers: { "content-type": "application/json", "api-key": key }, body, signal: warm.signal })));
  warm.abort();
}
await new Promise((r) => setTimeout(r, 2_000));
globalThis.gc?.();
const before = rssMiB(pid);
const heapBefore = await heapUsedMiB();
await snapshot();
const healthIdle = await health(200);

const abort = new AbortController();
setMaxListeners(0, abort.signal);
const cpu0 = cpuOf(pid);
const t0 = performance.now();
let failed = 0;
let firstFailure = "";
// Plain node:http clients, one connection each: fetch would spend more of these two cores than genserve.
const target = new URL(`${genserve.url}/api/v1/stream/object?cancelOnDisconnect=true`);
const requests: http.ClientRequest[] = [];
const opened = await Promise.all(
  Array.from({ length: STREAMS }, () =>
    new Promise<boolean>((resolve) => {
      const req = http.request(target, { method: "POST", agent: false, headers: { "content-type": "application/json", "api-key": key, accept: "text/event-stream" } }, (res) => {
        // The body is left unread (the model says nothing until the wait is over) and open.
        if (res.statusCode === 200 && res.headers["x-run-id"]) return resolve(true);
        failed++;
        firstFailure ||= `HTTP ${res.statusCode}`;
        resolve(false);
      });
      req.on("error", (error: NodeJS.ErrnoException) => {
        if (abort.signal.aborted) return;
        failed++;
        firstFailure ||= error.code ?? error.message;
        resolve(false);
      });
      requests.push(req);
      req.end(body);
    }),
  ),
);
const openSeconds = (performance.now() - t0) / 1000;
const cpuPerOpen = ((cpuOf(pid) - cpu0) * 1000) / STREAMS;
await new Promise((r) => setTimeout(r, 3_000)); // settled
const whileOpen = rssMiB(pid);
const heapOpen = await heapUsedMiB();
const healthOpen = await health(200);
await snapshot();
const open = opened.filter(Boolean).length;

const f = (n: number, d = 1) => n.toFixed(d);
process.stdout.write(
  [
    `Machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "?"}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; ${new Date().toISOString().slice(0, 10)}.`,
    "",
    "| streams | opened in s | open per s | genserve CPU ms per open | RSS before MiB | RSS while open MiB | KB per open stream (RSS) | heap used MiB before / open | heap KB per open stream | /healthz p50 / p99 ms idle | /healthz p50 / p99 ms while open | failed |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
    `| ${open} of ${STREAMS} | ${f(openSeconds, 2)} | ${f(open / openSeconds, 0)} | ${f(cpuPerOpen, 2)} | ${f(before)} | ${f(whileOpen)} | ${f(((whileOpen - before) * 1024) / Math.max(1, open))} | ${f(heapBefore)} / ${f(heapOpen)} | ${f(((heapOpen - heapBefore) * 1024) / Math.max(1, open))} | ${f(healthIdle.p50, 2)} / ${f(healthIdle.p99, 2)} | ${f(healthOpen.p50, 2)} / ${f(healthOpen.p99, 2)} | ${failed}${firstFailure ? ` (${firstFailure.slice(0, 120)})` : ""} |`,
    "",
  ].join("\n"),
);
abort.abort();
for (const req of requests) req.destroy();
await genserve.stop();
process.exit(0);
