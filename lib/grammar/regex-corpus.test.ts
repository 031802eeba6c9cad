/**
 * The regex → GBNF front end against its recorded answers (regex-corpus.json, written by
 * bench/regex-corpus.ts): 1,166 patterns — every `pattern` and `patternProperties` key of
 * JSONSchemaBench (development part and held-out part apart), the grammar tests' patterns and
 * hand-written edge cases. Each pattern's grammar (unbounded, under five length ranges) and its
 * single-class shape must hash the same as recorded; the few deliberate differences are listed in
 * CHANGED with why.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { corpusOutputs } from "./regex-corpus";

interface Row {
  pattern: string;
  group: "edge" | "worked" | "held-out";
  supported: boolean;
  hash: string;
}
const rows = JSON.parse(readFileSync(new URL("./regex-corpus.json", import.meta.url), "utf8")) as Row[];

/** Patterns whose answer changed on purpose: pattern → what is asserted instead, and why. */
const CHANGED = new Map<string, { check: (outputs: ReturnType<typeof corpusOutputs>) => void; why: string }>();

const hashOf = (outputs: ReturnType<typeof corpusOutputs>) => createHash("sha256").update(JSON.stringify(outputs)).digest("hex").slice(0, 16);

describe("regex → GBNF corpus", () => {
  it("has patterns in every group", () => {
    for (const group of ["edge", "worked", "held-out"]) expect(rows.filter((r) => r.group === group).length).toBeGreaterThan(100);
  });

  for (const group of ["edge", "worked", "held-out"] as const) {
    it(`answers every ${group} pattern as recorded`, () => {
      const counts = { patterns: 0, supported: 0, refused: 0, identical: 0, changed: 0 };
      const mismatches: string[] = [];
      for (const row of rows.filter((r) => r.group === group)) {
        const outputs = corpusOutputs(row.pattern);
        counts.patterns++;
        if (typeof outputs.gbnf === "string" && !outputs.gbnf.startsWith("THROW")) counts.supported++;
        else counts.refused++;
        const changed = CHANGED.get(row.pattern);
        if (changed) {
          changed.check(outputs);
          counts.changed++;
        } else if (hashOf(outputs) === row.hash) counts.identical++;
        else mismatches.push(JSON.stringify(row.pattern));
      }
      console.info(`regex corpus, ${group}: ${JSON.stringify(counts)}`);
      expect(mismatches).toEqual([]);
      expect(counts.identical + counts.changed).toBe(counts.patterns);
    });
  }
});
