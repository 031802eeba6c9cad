/**
 * The grammar compiler's bounded differential fuzz (see test/helpers/grammar-fuzz.ts): random
 * schemas, random walks of each grammar through llama.cpp's engine and mutants of the valid
 * instances, judged by the production validator. About a minute on a 2-core machine; a new seed
 * each run (printed on failure; GRAMMAR_FUZZ_SEED replays one). `npm run fuzz:grammar` runs longer
 * and on the benchmark's schemas too.
 */
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../config/load";
import { SchemaCompiler } from "../schema/validator";
import { createGrammarChecker, type GrammarChecker } from "../../test/helpers/grammar-check";
import { emptyStats, fuzzSchema, randomSchema } from "../../test/helpers/grammar-fuzz";
import { seededRandom } from "../../test/helpers/random";

const SCHEMAS = 1_000;
const seed = Number(process.env.GRAMMAR_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));

describe("grammar compiler, differential fuzz", () => {
  let checker: GrammarChecker;
  const validator = new SchemaCompiler({ ...DEFAULT_LIMITS }, { workerFile: fileURLToPath(new URL("../schema/validate-worker.mjs", import.meta.url)) });
  beforeAll(async () => {
    checker = await createGrammarChecker();
  });
  afterAll(async () => {
    await validator.close();
    await checker?.dispose();
  });

  it(`every text an exact grammar allows validates (seed ${seed})`, { timeout: 300_000 }, async () => {
    const random = seededRandom(seed);
    const stats = emptyStats();
    for (let i = 0; i < SCHEMAS; i++) await fuzzSchema(randomSchema(random), { checker, validator, random, walks: 8, mutantsPerValue: 4 }, stats);
    // The fuzz must have done real work, or a change to the generator could make it pass vacuously.
    expect(stats.exact).toBeGreaterThan(SCHEMAS / 4);
    expect(stats.walks).toBeGreaterThan(SCHEMAS * 4);
    expect(stats.mutantsAccepted).toBeGreaterThan(100);
    const shown = stats.disagreements.slice(0, 3).map((d) => `${d.kind}: ${d.detail}\n  schema ${JSON.stringify(d.schema)}\n  text ${d.text}`);
    expect(shown, `GRAMMAR_FUZZ_SEED=${seed}`).toEqual([]);
  });
});
