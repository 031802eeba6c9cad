/**
 * npm run bench:stream — CPU cost of parsing a streamed object incrementally, at two sizes.
 * The object is streamed in deltas of at most 16 bytes, as a model would. genserve's parser makes
 * one pass over the text; the common SDK approach re-parses the accumulated text on every delta
 * (measured here with the AI SDK's parsePartialJson, on the smaller size only: it is quadratic).
 */
import os from "node:os";
import { parsePartialJson } from "ai";
import { PartialJsonParser } from "../lib/json/partial";

function document(bytes: number): string {
  const items: unknown[] = [];
  let i = 0;
  while (JSON.stringify({ items }).length < bytes) {
    items.push({ id: i, title: `Item number ${i} with some text`, tags: ["alpha", "beta"], price: i * 1.25, available: i % 2 === 0, note: null });
    i++;
  }
  return JSON.stringify({ items });
}

function deltas(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; ) {
    const size = 1 + ((i * 7919) % 16); // 1..16 bytes, deterministic
    out.push(text.slice(i, i + size));
    i += size;
  }
  return out;
}

function cpuMs(work: () => void, repeat: number): number {
  work(); // warm-up
  const start = process.cpuUsage();
  for (let r = 0; r < repeat; r++) work();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / repeat;
}

const genserve = (chunks: string[]) => () => {
  let closed = 0;
  const parser = new PartialJsonParser(() => closed++);
  for (const chunk of chunks) parser.push(chunk);
  parser.result();
};

async function naive(chunks: string[]): Promise<number> {
  const start = process.cpuUsage();
  let text = "";
  for (const chunk of chunks) {
    text += chunk;
    await parsePartialJson(text);
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

const small = document(20 * 1024);
const large = document(200 * 1024);
const smallChunks = deltas(small);
const largeChunks = deltas(large);

const smallMs = cpuMs(genserve(smallChunks), 50);
const largeMs = cpuMs(genserve(largeChunks), 10);
const perByteSmall = (smallMs * 1e6) / small.length;
const perByteLarge = (largeMs * 1e6) / large.length;
const naiveSmallMs = await naive(smallChunks);

console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, node ${process.version}, ${new Date().toISOString().slice(0, 10)}`);
console.log("| document | deltas | genserve parser CPU | per byte | re-parse per delta (AI SDK parsePartialJson) |");
console.log("|---|---|---|---|---|");
console.log(`| ${(small.length / 1024).toFixed(0)} KB | ${smallChunks.length} | ${smallMs.toFixed(2)} ms | ${perByteSmall.toFixed(1)} ns | ${naiveSmallMs.toFixed(0)} ms |`);
console.log(`| ${(large.length / 1024).toFixed(0)} KB | ${largeChunks.length} | ${largeMs.toFixed(2)} ms | ${perByteLarge.toFixed(1)} ns | not run (quadratic) |`);
console.log(`per-byte cost at 200 KB / at 20 KB: ${(perByteLarge / perByteSmall).toFixed(2)} (target ≤ 2)`);
console.log(`re-parsing per delta / one pass, at 20 KB: ${(naiveSmallMs / smallMs).toFixed(0)}x`);

// The server end to end: one stream/object of a 4,000-item object (~250 KB) in 8-byte deltas from
// the fake upstream as fast as it can send them, read as it comes. Reported per upstream delta: the
// server process's CPU (robust on a busy machine) and the wall time, and how many SSE events it wrote
// (deltas that wait together go out as one). `--root DIR` runs another checkout (the baseline).
{
  const path = await import("node:path");
  const { cpuOf } = await import("./harness");
  const rootArg = process.argv.indexOf("--root");
  const root = rootArg > 0 ? path.resolve(process.argv[rootArg + 1]!) : path.resolve(import.meta.dirname, "..");
  const helpers = (name: string) => import(path.join(root, "test", "helpers", name));
  const { startFakeUpstream } = (await helpers("fake-upstream.ts")) as typeof import("../test/helpers/fake-upstream");
  const { startGenserve, tempDir, writeConfig } = (await helpers("genserve.ts")) as typeof import("../test/helpers/genserve");
  const { testConfig } = (await helpers("config.ts")) as typeof import("../test/helpers/config");
  const ITEMS = 4_000;
  const big = JSON.stringify({ items: Array.from({ length: ITEMS }, (_, i) => ({ id: i, title: `Item number ${i}`, tags: ["alpha", "beta"], price: i * 1.25, available: i % 2 === 0 })) });
  const upstream = await startFakeUpstream({ record: false });
  upstream.respondWith(() => ({ content: big }));
  const dir = tempDir("genserve-bench-stream-");
  const config = testConfig(upstream.url).replace("workflows:\n", "workflows:\n  long-list:\n    description: A long list\n    model: fast\n    retries: 0\n    timeoutMs: 900000\n");
  const server = await startGenserve({ configFile: writeConfig(dir, config), dataDir: path.join(dir, "data"), logLevel: "warn" });
  const schema = { type: "object", properties: { items: { type: "array", items: { type: "object" } } }, required: ["items"] };
  const once = async (query = "") => {
    const cpu = cpuOf(server.process.pid!);
    const start = Date.now();
    const res = await fetch(`${server.url}/api/v1/stream/object${query}`, {
      method: "POST",
      headers: { "content-type": "application/json", "api-key": server.adminKey! },
      body: JSON.stringify({ workflowSlug: "long-list", input: "the list", schema }),
    });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true });
    if (!text.includes("event: done")) throw new Error(`no done event: ${text.slice(-300)}`);
    return { ms: Date.now() - start, cpuS: cpuOf(server.process.pid!) - cpu, events: text.split("\n\n").filter((e) => e.startsWith("id:")).length };
  };
  try {
    await once(); // warm-up
    const r = await once();
    const deltas = Math.ceil(big.length / 8);
    console.log(`\nstream/object end to end: ${ITEMS} items, ${(big.length / 1024).toFixed(0)} KB in ${deltas} upstream deltas`);
    console.log("| wall | server CPU | deltas/s (wall) | deltas per server CPU second | server CPU per delta | SSE events written |");
    console.log("|---|---|---|---|---|---|");
    console.log(`| ${(r.ms / 1000).toFixed(2)} s | ${r.cpuS.toFixed(2)} s | ${Math.round(deltas / (r.ms / 1000))} | ${Math.round(deltas / r.cpuS)} | ${((r.cpuS * 1e6) / deltas).toFixed(0)} µs | ${r.events} |`);
    // The same stream with field events (?fields=true: 24,002 field events more), where the checkout has them.
    if (process.argv.includes("--fields")) {
      const f = await once("?fields=true");
      console.log(`| ?fields=true: ${(f.ms / 1000).toFixed(2)} s | ${f.cpuS.toFixed(2)} s | ${Math.round(deltas / (f.ms / 1000))} | ${Math.round(deltas / f.cpuS)} | ${((f.cpuS * 1e6) / deltas).toFixed(0)} µs | ${f.events} |`);
    }
  } finally {
    await server.stop();
    await upstream.close();
  }
}
