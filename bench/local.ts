/**
 * npm run bench:local — the local engine on a real small model (../shared/models/stories260K.gguf).
 *
 * 1. Constrained against unconstrained decoding: the same prompt and model, the same number of
 *    generated tokens; tokens/s of each and the ratio. The constrained run samples under the grammar
 *    genserve compiles for a schema with a long free-text field, so both decode about as many tokens.
 * 2. Concurrency: one run alone, then two at once on one loaded model (two lanes: a context each,
 *    sharing the weights); aggregate tokens/s and the ratio.
 * 3. The design alternative, measured in the same run with node-llama-cpp directly: one context with
 *    two sequences (batched into one decode) against two contexts with one sequence each.
 *
 * Every figure is the median of several rounds, measured through the llama-cpp provider that serves runs.
 */
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ModelConfig } from "../lib/config/config-types";
import { GRAMMAR_WORKER_FILE, GrammarWorkerPool } from "../lib/grammar/grammar-pool";
import { createLlamaCppModel } from "../lib/models/llama-cpp";
import type { ModelRequest } from "../lib/models/model-client";

const MODEL = path.resolve(import.meta.dirname, "../../shared/models/stories260K.gguf");
if (!existsSync(MODEL)) {
  console.log(`bench:local needs ${MODEL} (see ../shared/models/README.md); not found, nothing measured.`);
  process.exit(0);
}

const ROUNDS = 5;
const TOKENS = 200;
// The provider's default: the cores shared out between the lanes (BENCH_THREADS overrides it).
const threads = process.env.BENCH_THREADS ? Number(process.env.BENCH_THREADS) : undefined;
const threadsUsed = threads ?? Math.max(1, Math.floor(os.availableParallelism() / 2));
const config: ModelConfig = {
  alias: "stories",
  provider: "llama-cpp",
  model: "stories260K",
  path: MODEL,
  parallel: 2,
  queue: 8,
  threads,
  pricing: { input: 0, output: 0 },
  structuredOutputs: true,
  vision: false,
};
const grammars = new GrammarWorkerPool(path.resolve(import.meta.dirname, "..", GRAMMAR_WORKER_FILE), { size: 1, timeoutMs: 10_000 });
const client = createLlamaCppModel(config, { file: { ok: true, file: MODEL }, grammars });
await client.warm();

const SCHEMA = {
  type: "object",
  properties: { title: { type: "string", maxLength: 20 }, story: { type: "string", minLength: 2000 } },
  required: ["title", "story"],
};

const request = (json: boolean): ModelRequest => ({
  system: "",
  messages: [{ role: "user", content: "Once upon a time, there was a little girl named Lily." }],
  temperature: 0.8,
  maxOutputTokens: TOKENS,
  json: json ? { schema: SCHEMA } : undefined,
  abortSignal: AbortSignal.timeout(300_000),
});

/** Tokens per second of one generation, counted by the engine. */
async function timed(json: boolean): Promise<{ tokens: number; ms: number }> {
  const start = performance.now();
  const result = await client.generate(request(json));
  return { tokens: result.usage.outputTokens, ms: performance.now() - start };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const rate = (r: { tokens: number; ms: number }) => (r.tokens / r.ms) * 1000;

await timed(false); // warm-up
await timed(true);

const free: number[] = [];
const constrained: number[] = [];
const freeTokens: number[] = [];
const constrainedTokens: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  // Interleaved, so drift on the machine affects both alike.
  const a = await timed(false);
  const b = await timed(true);
  free.push(rate(a));
  constrained.push(rate(b));
  freeTokens.push(a.tokens);
  constrainedTokens.push(b.tokens);
}

const single: number[] = [];
const pair: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  single.push(rate(await timed(false)));
  const start = performance.now();
  const both = await Promise.all([client.generate(request(false)), client.generate(request(false))]);
  const tokens = both.reduce((n, r) => n + r.usage.outputTokens, 0);
  pair.push((tokens / (performance.now() - start)) * 1000);
}

// 3. One context × two sequences against two contexts × one sequence, raw node-llama-cpp.
const { getLlama, LlamaLogLevel } = await import("node-llama-cpp");
const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
const raw = await llama.loadModel({ modelPath: MODEL });
const evaluate = async (sequence: { evaluate: (tokens: never, options: object) => AsyncIterable<unknown>; clearHistory(): Promise<void> }, n: number) => {
  let count = 0;
  for await (const _ of sequence.evaluate(raw.tokenize("Once upon a time") as never, { temperature: 0.8 })) if (++count >= n) break;
  await sequence.clearHistory();
  return count;
};
const design: Record<string, number[]> = { "one context × 2 sequences": [], "two contexts × 1 sequence": [], "single sequence": [] };
const shared = await raw.createContext({ sequences: 2, contextSize: 512, threads: threadsUsed });
const lanes = [await raw.createContext({ sequences: 1, contextSize: 512, threads: threadsUsed }), await raw.createContext({ sequences: 1, contextSize: 512, threads: threadsUsed })];
const [a1, a2] = [shared.getSequence(), shared.getSequence()];
const [b1, b2] = [lanes[0]!.getSequence(), lanes[1]!.getSequence()];
await evaluate(b1, 20);
for (let i = 0; i < ROUNDS; i++) {
  let start = performance.now();
  design["single sequence"]!.push(((await evaluate(b1, TOKENS)) / (performance.now() - start)) * 1000);
  start = performance.now();
  const x = await Promise.all([evaluate(a1, TOKENS), evaluate(a2, TOKENS)]);
  design["one context × 2 sequences"]!.push(((x[0] + x[1]) / (performance.now() - start)) * 1000);
  start = performance.now();
  const y = await Promise.all([evaluate(b1, TOKENS), evaluate(b2, TOKENS)]);
  design["two contexts × 1 sequence"]!.push(((y[0] + y[1]) / (performance.now() - start)) * 1000);
}

const f = median(free);
const c = median(constrained);
const s = median(single);
const p = median(pair);
console.log(`bench:local — ${new Date().toISOString().slice(0, 10)}, ${os.cpus()[0]?.model ?? "cpu"} × ${os.availableParallelism()}, ${threadsUsed} thread(s) per lane, Node ${process.version}`);
console.log(`model: stories260K.gguf; ${ROUNDS} rounds, median; up to ${TOKENS} generated tokens per run, temperature 0.8\n`);
console.log("| measure | tokens/s | ratio |");
console.log("|---|---|---|");
console.log(`| unconstrained (median ${median(freeTokens)} tokens) | ${f.toFixed(1)} | 1.00 |`);
console.log(`| constrained by genserve's grammar (median ${median(constrainedTokens)} tokens) | ${c.toFixed(1)} | ${(c / f).toFixed(2)} (cost ${(100 * (1 - c / f)).toFixed(1)}%) |`);
console.log(`| one run alone | ${s.toFixed(1)} | 1.00 |`);
console.log(`| two concurrent runs, aggregate | ${p.toFixed(1)} | ${(p / s).toFixed(2)} |`);
const base = median(design["single sequence"]!);
console.log("\n| node-llama-cpp directly (design comparison) | tokens/s | ratio |");
console.log("|---|---|---|");
for (const [name, values] of Object.entries(design)) console.log(`| ${name} | ${median(values).toFixed(1)} | ${(median(values) / base).toFixed(2)} |`);
await client.dispose();
await grammars.close();
process.exit(0);
