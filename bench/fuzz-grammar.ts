/**
 * npm run fuzz:grammar -- [--minutes N] [--seed S] [--no-bench]
 *
 * The grammar compiler's differential fuzz (test/helpers/grammar-fuzz.ts), run longer than the
 * bounded test in `npm test`. Half the time goes to random schemas; the other half, when
 * ../shared/jsonschemabench is present, to the benchmark's schemas (each with its own valid test
 * instances mutated as well), in random order. Benchmark schemas are reported in two groups: the
 * development part and a held-out part (every fifth schema by a hash of its id), which compiler
 * work should not be tuned on. Prints one summary line per group and every disagreement; exits 1
 * when there is any.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { gunzipSync } from "node:zlib";
import { DEFAULT_LIMITS } from "../lib/config/load";
import { SCHEMA_WORKER_FILE } from "../lib/schema/schema-worker";
import { SchemaCompiler } from "../lib/schema/validator";
import { createGrammarChecker } from "../test/helpers/grammar-check";
import { emptyStats, type FuzzStats, fuzzSchema, randomSchema } from "../test/helpers/grammar-fuzz";
import { seededRandom } from "../test/helpers/random";

const ROOT = path.resolve(import.meta.dirname, "..");
const DATA = path.resolve(ROOT, "../shared/jsonschemabench");
const args = process.argv.slice(3);
const option = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const MINUTES = Number(option("--minutes") ?? 1);
const SEED = Number(option("--seed") ?? Math.floor(Math.random() * 2 ** 31));
const BENCH = !args.includes("--no-bench") && existsSync(DATA);

const validator = new SchemaCompiler({ ...DEFAULT_LIMITS, validatorCache: 64 }, { workerFile: path.join(ROOT, SCHEMA_WORKER_FILE) });
const checker = await createGrammarChecker();
const random = seededRandom(SEED);
const groups = new Map<string, FuzzStats>([["random schemas", emptyStats()]]);
const started = performance.now();
const deadline = started + MINUTES * 60_000;
const options = { checker, validator, random, walks: 8, mutantsPerValue: 4 };

// A bug in the fuzzed code (a hang in llama.cpp, a throw) must not hide the results so far.
async function fuzzOne(schema: unknown, stats: FuzzStats, instances?: unknown[]) {
  try {
    await fuzzSchema(schema, { ...options, instances: instances as never }, stats);
  } catch (error) {
    stats.disagreements.push({ schema, text: "", kind: "error", detail: `the fuzz threw: ${(error as Error).message}` });
  }
}

const randomUntil = BENCH ? started + (deadline - started) / 2 : deadline;
while (performance.now() < randomUntil) await fuzzOne(randomSchema(random), groups.get("random schemas")!);

if (BENCH) {
  const entries: { id: string; split: string; schema: unknown; valid: unknown[] }[] = [];
  for (const file of readdirSync(DATA).filter((f) => f.endsWith(".jsonl.gz"))) {
    const split = file.replace(".jsonl.gz", "");
    for (const line of gunzipSync(readFileSync(path.join(DATA, file))).toString("utf8").split("\n")) {
      if (!line.trim()) continue;
      const e = JSON.parse(line) as { id: string; schema: unknown; tests?: { valid: boolean; data: unknown }[] };
      entries.push({ id: e.id, split, schema: e.schema, valid: (e.tests ?? []).filter((t) => t.valid).map((t) => t.data) });
    }
  }
  // Random order, so a short run still samples every split.
  for (let i = entries.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [entries[i], entries[j]] = [entries[j]!, entries[i]!];
  }
  groups.set("benchmark, development part", emptyStats());
  groups.set("benchmark, held out (1 in 5)", emptyStats());
  for (const entry of entries) {
    if (performance.now() >= deadline) break;
    const heldOut = createHash("sha256").update(entry.id).digest()[0]! % 5 === 0;
    await fuzzOne(entry.schema, groups.get(heldOut ? "benchmark, held out (1 in 5)" : "benchmark, development part")!, entry.valid);
  }
}

await validator.close();
await checker.dispose();

console.log(`fuzz:grammar, seed ${SEED}, ${((performance.now() - started) / 60_000).toFixed(1)} min, ${new Date().toISOString().slice(0, 10)}`);
console.log("| group | schemas fuzzed | exact grammars | walks (unfinished) | mutants (accepted) | disagreements |");
console.log("|---|---|---|---|---|---|");
let total = 0;
for (const [name, s] of groups) {
  total += s.disagreements.length;
  console.log(`| ${name} | ${s.schemas} | ${s.exact} | ${s.walks} (${s.walksUnfinished}) | ${s.mutants} (${s.mutantsAccepted}) | ${s.disagreements.length} |`);
}
for (const [name, s] of groups) {
  for (const d of s.disagreements) console.log(`\n[${name}] ${d.kind}: ${d.detail}\n  schema ${JSON.stringify(d.schema).slice(0, 2000)}\n  text ${d.text.slice(0, 500)}`);
}
process.exit(total > 0 ? 1 : 0);
