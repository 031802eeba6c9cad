/**
 * npm run bench:schemas — genserve's JSON Schema → GBNF compiler on JSONSchemaBench.
 *
 * Needs ../shared/jsonschemabench (the development splits; see its README). For every schema, per split:
 *   - rejected: genserve refuses it (screening, meta-schema, ajv compile), or no value fits it;
 *   - exact: compiled to a grammar that expresses every keyword (outputs need no validation);
 *   - fallback: compiled to a grammar for part of it, validation and retry do the rest;
 *   - compile time p50/p95 of genserve's compiler, and llama.cpp's own parse of the grammar;
 *   - soundness on the benchmark's own test instances, through llama.cpp's grammar engine: every
 *     `valid: false` instance an exact grammar accepts would be a compiler bug (must be 0); and how
 *     many `valid: true` instances it accepts (it generates declared order and compact spacing, so
 *     fewer than all);
 *   - generation: for a sample of schemas per split, the real llama-cpp provider generates under the
 *     grammar and ajv validates the output. Under an exact grammar every output that ends within the
 *     token limit must validate; outputs cut by the limit are counted apart. The model is the tiny
 *     random-weight test model (4096-token context, up to 1500 tokens), or with `--model stories`
 *     the trained ../shared/models/stories260K.gguf (512-token context, up to 480 tokens), which
 *     tends to write stories inside strings until the limit.
 *
 * Options: --sample N (generations per split, default 12), --splits A,B, --no-generate, --model tiny|stories.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { gunzipSync } from "node:zlib";
import { DEFAULT_LIMITS } from "../lib/config/load";
import type { ModelConfig } from "../lib/config/config-types";
import { compileGrammar, UnsatisfiableSchemaError } from "../lib/grammar/compile";
import { GRAMMAR_WORKER_FILE, GrammarWorkerPool } from "../lib/grammar/grammar-pool";
import { createLlamaCppModel } from "../lib/models/llama-cpp";
import { SCHEMA_WORKER_FILE } from "../lib/schema/schema-worker";
import { SchemaCompiler } from "../lib/schema/validator";
import { createGrammarChecker } from "../test/helpers/grammar-check";
import { writeTinyModel } from "../test/helpers/tiny-gguf";

const ROOT = path.resolve(import.meta.dirname, "..");
const DATA = path.resolve(ROOT, "../shared/jsonschemabench");
const STORIES = path.resolve(ROOT, "../shared/models/stories260K.gguf");

const args = process.argv.slice(3);
const option = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const SAMPLE = Number(option("--sample") ?? 12);
const GENERATE = !args.includes("--no-generate");
const ONLY = option("--splits")?.split(",");
/** --trace: name each schema as it starts (to find one that hangs). */
const TRACE = args.includes("--trace");

if (!existsSync(DATA)) {
  console.log(`bench:schemas needs JSONSchemaBench in ${DATA} (see ../shared/jsonschemabench/README.md); not found, nothing measured.`);
  process.exit(0);
}

interface Entry {
  id: string;
  schema: unknown;
  tests?: { valid: boolean; data: unknown }[];
}

interface SplitResult {
  split: string;
  total: number;
  rejected: number;
  exact: number;
  fallback: number;
  llamaParseErrors: number;
  compileMs: number[];
  parseMs: number[];
  /** The whole preparation of each schema: screening and ajv, the grammar compiler, llama.cpp's parse (or until refused). */
  prepareMs: number[];
  validAccepted: number;
  validTests: number;
  invalidAcceptedByExact: number;
  invalidTestsOnExact: number;
  generated: number;
  generatedValid: number;
  exactGenerated: number;
  exactValid: number;
  truncated: number;
  exactTruncated: number;
}

const percentile = (values: number[], p: number) => {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

const compiler = new SchemaCompiler({ ...DEFAULT_LIMITS, validatorCache: 64 }, { workerFile: path.join(ROOT, SCHEMA_WORKER_FILE) });
const checker = await createGrammarChecker();

const useStories = option("--model") === "stories";
if (useStories && !existsSync(STORIES)) {
  console.log(`--model stories needs ${STORIES}; not found.`);
  process.exit(0);
}
let modelFile = STORIES;
let modelLabel = "stories260K (trained, 512-token context)";
const maxTokens = useStories ? 480 : 1500;
if (!useStories) {
  modelFile = path.join(mkdtempSync(path.join(os.tmpdir(), "bench-")), "tiny.gguf");
  writeTinyModel(modelFile);
  modelLabel = "the generated tiny test model (random weights, 4096-token context)";
}
const modelConfig: ModelConfig = {
  alias: "bench",
  provider: "llama-cpp",
  model: modelLabel,
  path: modelFile,
  parallel: 1,
  queue: 0,
  threads: os.availableParallelism(),
  pricing: { input: 0, output: 0 },
  structuredOutputs: true,
  vision: false,
};
const grammars = new GrammarWorkerPool(path.resolve(import.meta.dirname, "..", GRAMMAR_WORKER_FILE), { size: 1, timeoutMs: 10_000 });
const client = createLlamaCppModel(modelConfig, { file: { ok: true, file: modelFile }, grammars });

const splits = readdirSync(DATA)
  .filter((f) => f.endsWith(".jsonl.gz"))
  .map((f) => f.replace(".jsonl.gz", ""))
  .filter((s) => !ONLY || ONLY.includes(s))
  .sort();

const results: SplitResult[] = [];
/** Why schemas were not exact, by keyword (the `at …` part dropped), across all splits. */
const reasons = new Map<string, number>();
const parts = new Map(["development part", "held out (1 in 5)"].map((name) => [name, { total: 0, exact: 0, fallback: 0, rejected: 0 }]));
const rejections = new Map<string, number>();
for (const split of splits) {
  const entries = gunzipSync(readFileSync(path.join(DATA, `${split}.jsonl.gz`)))
    .toString("utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Entry);
  const r: SplitResult = {
    split,
    total: entries.length,
    rejected: 0,
    exact: 0,
    fallback: 0,
    llamaParseErrors: 0,
    compileMs: [],
    parseMs: [],
    prepareMs: [],
    validAccepted: 0,
    validTests: 0,
    invalidAcceptedByExact: 0,
    invalidTestsOnExact: 0,
    generated: 0,
    generatedValid: 0,
    exactGenerated: 0,
    exactValid: 0,
    truncated: 0,
    exactTruncated: 0,
  };
  const usable: { entry: Entry; exact: boolean }[] = [];
  for (const entry of entries) {
    if (TRACE) console.error(`${entry.id}: start`);
    const took = await measureEntry(entry);
    if (took > 2_000) console.error(`${entry.id}: slow to prepare, ${(took / 1000).toFixed(1)} s`);
  }
  /** Measures one schema; returns how long its preparation took (ms). */
  async function measureEntry(entry: Entry): Promise<number> {
    const start = performance.now();
    const done = () => {
      const ms = performance.now() - start;
      r.prepareMs.push(ms);
      return ms;
    };
    // Every fifth schema by a hash of its id is held out (as in fuzz:grammar): reported apart, and
    // not looked at while changing the compiler.
    const part = parts.get(createHash("sha256").update(entry.id).digest()[0]! % 5 === 0 ? "held out (1 in 5)" : "development part")!;
    part.total++;
    let prepared;
    try {
      prepared = await compiler.prepare(entry.schema, ["schema"], { topLevelRule: false });
    } catch (error) {
      r.rejected++;
      part.rejected++;
      const first = (error as { errors?: { message: string }[] }).errors?.[0]?.message ?? (error as Error).message;
      const reason = first.replace(/"[^"]*"/g, '"…"').replace(/\d+/g, "N").slice(0, 80);
      rejections.set(reason, (rejections.get(reason) ?? 0) + 1);
      return done();
    }
    let compiled;
    const t0 = performance.now();
    try {
      compiled = compileGrammar(prepared.schema);
    } catch (error) {
      if (!(error instanceof UnsatisfiableSchemaError)) console.error(`${entry.id}: compiler error: ${(error as Error).message}`);
      r.rejected++;
      part.rejected++;
      return done();
    }
    r.compileMs.push(performance.now() - t0);
    const t1 = performance.now();
    let grammar;
    try {
      grammar = await checker.grammar(compiled.gbnf);
    } catch (error) {
      r.llamaParseErrors++;
      r.fallback++;
      part.fallback++;
      console.error(`${entry.id}: llama.cpp refused the grammar: ${(error as Error).message}`);
      return done();
    }
    r.parseMs.push(performance.now() - t1);
    const took = done();
    if (compiled.exact) r.exact++;
    else r.fallback++;
    part[compiled.exact ? "exact" : "fallback"]++;
    for (const why of new Set(compiled.unexpressed.map((u) => u.replace(/ at .*$/, "")))) reasons.set(why, (reasons.get(why) ?? 0) + 1);
    usable.push({ entry, exact: compiled.exact });
    for (const test of entry.tests ?? []) {
      const accepted = checker.accepts(grammar, JSON.stringify(test.data));
      if (test.valid) {
        r.validTests++;
        if (accepted) r.validAccepted++;
      } else if (compiled.exact) {
        r.invalidTestsOnExact++;
        if (accepted) {
          // Only a compiler bug if ajv agrees the instance is invalid.
          const check = await prepared.validate(test.data);
          if (!check.valid) {
            r.invalidAcceptedByExact++;
            console.error(`${entry.id}: exact grammar accepted an invalid instance: ${JSON.stringify(test.data).slice(0, 200)}`);
          }
        }
      }
    }
    return took;
  }

  if (GENERATE && usable.length) {
    const step = Math.max(1, Math.floor(usable.length / SAMPLE));
    for (let i = 0; i < usable.length && r.generated < SAMPLE; i += step) {
      const { entry, exact } = usable[i]!;
      const prepared = await compiler.prepare(entry.schema, ["schema"], { topLevelRule: false });
      const result = await client.generate({
        system: "Reply with JSON.",
        messages: [{ role: "user", content: "Once upon a time" }],
        temperature: 0.7,
        maxOutputTokens: maxTokens,
        json: { schema: prepared.schema },
        abortSignal: AbortSignal.timeout(120_000),
      });
      r.generated++;
      if (exact) r.exactGenerated++;
      let valid = false;
      try {
        valid = (await prepared.validate(JSON.parse(result.text))).valid;
      } catch {
        valid = false;
      }
      if (result.finishReason === "length") {
        r.truncated++;
        if (exact) r.exactTruncated++;
      }
      if (valid) {
        r.generatedValid++;
        if (exact) r.exactValid++;
      } else if (exact && result.finishReason !== "length") {
        console.error(`${entry.id}: output under an exact grammar did not validate: ${result.text.slice(0, 300)}`);
      }
    }
  }
  results.push(r);
  console.error(`${split}: done`);
}

const pct = (n: number, d: number) => (d ? `${((100 * n) / d).toFixed(1)}%` : "–");
const all = results.reduce(
  (a, r) => {
    for (const k of Object.keys(a) as (keyof typeof a)[]) (a[k] as number) += r[k] as number;
    return a;
  },
  { total: 0, rejected: 0, exact: 0, fallback: 0, llamaParseErrors: 0, validAccepted: 0, validTests: 0, invalidAcceptedByExact: 0, invalidTestsOnExact: 0, generated: 0, generatedValid: 0, exactGenerated: 0, exactValid: 0, truncated: 0, exactTruncated: 0 },
);
const compileAll = results.flatMap((r) => r.compileMs);
const parseAll = results.flatMap((r) => r.parseMs);
const prepareAll = results.flatMap((r) => r.prepareMs);

console.log(`\nbench:schemas — ${new Date().toISOString().slice(0, 10)}, ${os.cpus()[0]?.model ?? "cpu"} × ${os.availableParallelism()}, Node ${process.version}`);
console.log(`generation model: ${modelLabel}; ${GENERATE ? `${SAMPLE} schemas per split, temperature 0.7, at most ${maxTokens} tokens` : "skipped"}\n`);
console.log("| split | schemas | exact grammar | grammar + validation | rejected | compile p50 / p95 (ms) | llama.cpp parse p95 (ms) | valid tests accepted | invalid tests accepted by exact | generated: valid (exact: valid) | cut by the token limit (exact) |");
console.log("|---|---|---|---|---|---|---|---|---|---|---|");
for (const r of [...results, { ...all, split: "**all**", compileMs: compileAll, parseMs: parseAll } as SplitResult]) {
  console.log(
    `| ${r.split} | ${r.total} | ${r.exact} (${pct(r.exact, r.total)}) | ${r.fallback} (${pct(r.fallback, r.total)}) | ${r.rejected} (${pct(r.rejected, r.total)}) | ${percentile(r.compileMs, 50).toFixed(2)} / ${percentile(r.compileMs, 95).toFixed(2)} | ${percentile(r.parseMs, 95).toFixed(2)} | ${r.validAccepted}/${r.validTests} | ${r.invalidAcceptedByExact}/${r.invalidTestsOnExact} | ${r.generatedValid}/${r.generated} (${r.exactValid}/${r.exactGenerated}) | ${r.truncated} (${r.exactTruncated}) |`,
  );
}
console.log("\n| part of all splits | schemas | exact grammar | grammar + validation | rejected |\n|---|---|---|---|---|");
for (const [name, p] of parts) console.log(`| ${name} | ${p.total} | ${p.exact} (${pct(p.exact, p.total)}) | ${p.fallback} (${pct(p.fallback, p.total)}) | ${p.rejected} (${pct(p.rejected, p.total)}) |`);
const top = (map: Map<string, number>) =>
  [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12)
    .map(([k, n]) => `${k} (${n})`)
    .join("; ");
const ms = (v: number) => `${v.toFixed(v < 10 ? 2 : 0)} ms`;
console.log(
  `\nGrammar compile, all schemas: p99 ${ms(percentile(compileAll, 99))}, max ${ms(Math.max(...compileAll))}. ` +
    `Whole preparation (screening and ajv, the compiler, llama.cpp's parse, or until refused): p50 ${ms(percentile(prepareAll, 50))}, p99 ${ms(percentile(prepareAll, 99))}, ` +
    `max ${ms(Math.max(...prepareAll))}; ${prepareAll.filter((t) => t > 2_000).length} of ${prepareAll.length} over 2 s.`,
);
console.log(`\nMost common reasons for grammar + validation (schemas): ${top(reasons) || "none"}`);
console.log(`Most common reasons for rejection: ${top(rejections) || "none"}`);
if (all.llamaParseErrors) console.log(`\nllama.cpp refused ${all.llamaParseErrors} grammars (counted under grammar + validation).`);
await client.dispose();
await grammars.close();
await checker.dispose();
await compiler.close();
process.exit(0);
