/**
 * npm run bench:suites [-- --cases N --concurrency C] — one evaluation of N cases (default 1,000)
 * against a fast fake upstream (its own process, answering at once), and, in the same run, the same
 * number of ordinary generate/object requests from C clients as the baseline.
 *
 * Measured: the evaluation's wall time and genserve's CPU time per case (user + system, /proc),
 * against the CPU time per ordinary request (which also has its HTTP exchange and callback). Every
 * case has three expectations; results land in SQLite. BENCH_PROFILE=dir writes a CPU profile of
 * genserve there, and prints the evaluation's window on the monotonic clock the profile uses: how a
 * case's time divides between the model call, storage and the evaluation. Results: docs/benchmarks.md.
 */
import os from "node:os";
import { parseArgs } from "node:util";
import { INVOICE_SCHEMA } from "../test/helpers/config";
import { startGenserve, tempDir, writeConfig } from "../test/helpers/genserve";
import { startReceiver } from "../test/helpers/receiver";
import { cpuOf, startUpstreamProcess } from "./harness";

const { values } = parseArgs({ args: process.argv.slice(3), options: { cases: { type: "string", default: "1000" }, concurrency: { type: "string", default: "8" } } });
const CASES = Number(values.cases);
const CONCURRENCY = Number(values.concurrency);

const upstream = await startUpstreamProcess(0);
// Ordinary runs' callbacks go to a loopback receiver (an unreachable one would retry during the evaluation).
const receiver = await startReceiver();
const config = `
models:
  free: { provider: openai-compatible, baseURL: "${upstream.url}", model: fake-free }
workflows:
  extract: { model: free, retries: 0 }
limits:
  evaluationConcurrency: ${CONCURRENCY}
network:
  allowPrivate: true
`;
const PROFILE_DIR = process.env.BENCH_PROFILE; // a CPU profile of genserve (--cpu-prof) into this directory
const genserve = await startGenserve({
  configFile: writeConfig(tempDir(), config),
  dataDir: tempDir("genserve-bench-"),
  logLevel: "warn",
  nodeArgs: PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : [],
});
const key = genserve.adminKey!;
const pid = genserve.process.pid!;
const headers = { "api-key": key, "content-type": "application/json" };

try {
  const suite = {
    workflow: "extract",
    schema: INVOICE_SCHEMA,
    cases: Array.from({ length: CASES }, (_, i) => ({
      name: `invoice ${i}`,
      input: `Invoice INV-${i}: ${i} EUR`,
      expect: { "/number": { present: true }, "/total": { min: 0 }, "/currency": { oneOf: ["EUR", "USD"] } },
    })),
  };
  const put = await fetch(`${genserve.url}/api/v1/suites/bench`, { method: "PUT", headers, body: JSON.stringify(suite) });
  if (!put.ok) throw new Error(`PUT suite: ${put.status} ${await put.text()}`);

  // Warm-up: the schema compiled, the connection pools open.
  for (let i = 0; i < 200; i++) await fetch(`${genserve.url}/api/v1/generate/object`, { method: "POST", headers, body: JSON.stringify({ input: "warm", type: "event", callback: { url: receiver.url }, workflowSlug: "extract", schema: INVOICE_SCHEMA }) });

  // The baseline: the same number of ordinary runs, C at a time.
  let cpu = cpuOf(pid);
  let started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CASES) {
        const i = next++;
        const response = await fetch(`${genserve.url}/api/v1/generate/object`, { method: "POST", headers, body: JSON.stringify({ input: `Invoice INV-${i}: ${i} EUR`, type: "event", callback: { url: receiver.url }, workflowSlug: "extract", schema: INVOICE_SCHEMA }) });
        if (!response.ok) throw new Error(`generate/object: ${response.status}`);
        await response.arrayBuffer();
      }
    }),
  );
  const runs = { wallS: (performance.now() - started) / 1000, cpuS: cpuOf(pid) - cpu };

  const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
  const windowStart = monotonicUs();
  cpu = cpuOf(pid);
  started = performance.now();
  const { id } = (await (await fetch(`${genserve.url}/api/v1/suites/bench/evaluations`, { method: "POST", headers, body: "{}" })).json()) as { id: string };
  let report: { status: string; totals: { done: number; passed: number } };
  for (;;) {
    await new Promise((r) => setTimeout(r, 500));
    const list = (await (await fetch(`${genserve.url}/api/v1/suites/bench/evaluations?limit=1`, { headers })).json()) as { evaluations: (typeof report)[] };
    report = list.evaluations[0]!;
    if (!["queued", "running"].includes(report.status)) break;
  }
  const evaluation = { wallS: (performance.now() - started) / 1000, cpuS: cpuOf(pid) - cpu };
  // The evaluation's window on the monotonic clock the profile's timestamps use too.
  if (PROFILE_DIR) console.log(`profile window of the evaluation (µs, monotonic): ${windowStart} ${monotonicUs()}`);
  if (report.status !== "completed" || report.totals.passed !== CASES) throw new Error(`the evaluation ended ${report.status} with ${report.totals.passed}/${CASES} passed`);

  const perCase = (evaluation.cpuS * 1000) / CASES;
  const perRun = (runs.cpuS * 1000) / CASES;
  console.log(`\nbench:suites — ${new Date().toISOString()}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim()}), Node ${process.version}`);
  console.log(`${CASES} cases, 3 expectations each, ${CONCURRENCY} at a time; polling its totals every 500 ms is included in the evaluation's CPU`);
  console.log("| | wall | per case | genserve CPU per case |");
  console.log("|---|---|---|---|");
  console.log(`| ${CASES} ordinary generate/object runs (${CONCURRENCY} clients) | ${runs.wallS.toFixed(2)} s | ${((runs.wallS * 1000) / CASES).toFixed(2)} ms | ${perRun.toFixed(2)} ms |`);
  console.log(`| one evaluation of ${CASES} cases | ${evaluation.wallS.toFixed(2)} s | ${((evaluation.wallS * 1000) / CASES).toFixed(2)} ms | ${perCase.toFixed(2)} ms |`);
  // Not the same work: an ordinary request also has its HTTP exchange and its callback delivery.
  console.log(`\nan evaluation's case costs ${(perCase / perRun).toFixed(2)}× the CPU of an ordinary generate/object request with its callback`);
} finally {
  await genserve.stop();
  upstream.child.kill();
  await receiver.close();
}
