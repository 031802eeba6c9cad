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
