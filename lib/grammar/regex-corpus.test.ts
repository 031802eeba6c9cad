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
import { translatePattern } from "../regex/pattern-engine.mjs";
import { patternRefusal } from "./regex";
import { corpusOutputs } from "./regex-corpus";

interface Row {
  pattern: string;
  group: "edge" | "worked" | "held-out";
  supported: boolean;
  hash: string;
}
const rows = JSON.parse(readFileSync(new URL("./regex-corpus.json", import.meta.url), "utf8")) as Row[];

type Outputs = ReturnType<typeof corpusOutputs>;
const hashOf = (outputs: Outputs) => createHash("sha256").update(JSON.stringify(outputs)).digest("hex").slice(0, 16);
const recorded = (pattern: string) => rows.find((r) => r.pattern === pattern)!.hash;

/**
 * The deliberate differences from the hand-written parser this front end replaced (regexpp now
 * reads every pattern with the `u` flag, as the validator does): which patterns, and what is
 * asserted for them instead of the recorded answer.
 */
const CHANGED: { why: string; applies: (pattern: string) => boolean; check: (pattern: string, outputs: Outputs) => void }[] = [
  {
    // `\:`, `\-` outside a class, `a{`, a lone `]`, a duplicate group name, `\u{110000}` (the old
    // parser threw on it): the schema guard answers 400 "is not a valid regular expression" for
    // these, so no grammar is ever asked for them; now the grammar refuses them too.
    why: "not valid with the u flag",
    applies: (pattern) => !translatePattern(pattern).ok && (translatePattern(pattern) as { invalid: boolean }).invalid,
    check: (pattern, outputs) => {
      expect(outputs).toEqual({ gbnf: null, bounded: [null, null, null, null, null], single: null });
      expect(patternRefusal(pattern)).toMatch(/^not a valid pattern with the u flag: /);
    },
  },
  {
    // With the `u` flag an escaped surrogate pair is one code point, as the validator reads it; the
    // old parser read two lone surrogates (which its grammar text wrote out as two U+FFFD).
    why: "an escaped surrogate pair is one code point",
    applies: (pattern) => pattern === "\\uD83D\\uDE00" || pattern === "[\\uD83D\\uDE00]",
    check: (pattern, outputs) => expect(hashOf(outputs)).toBe(recorded(pattern.startsWith("[") ? "[😀]" : "😀")),
  },
];

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
        const changed = CHANGED.find((c) => c.applies(row.pattern));
        if (hashOf(outputs) === row.hash) counts.identical++;
        else if (changed) {
          changed.check(row.pattern, outputs);
          counts.changed++;
        } else mismatches.push(JSON.stringify(row.pattern));
      }
      console.info(`regex corpus, ${group}: ${JSON.stringify(counts)}`);
      expect(mismatches).toEqual([]);
      expect(counts.identical + counts.changed).toBe(counts.patterns);
    });
  }
});
