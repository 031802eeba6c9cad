import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { schemaRegExp, translatePattern } from "./pattern-engine.mjs";

// Differential: a translated pattern on RE2 must say what JavaScript's RegExp (u flag) says, for
// random patterns built from the constructs where the two dialects differ most (`.`, `\s`, classes,
// escapes, anchors, counts) and random strings over characters that tell them apart.
const CHARS = ["a", "b", "Z", "0", "9", "_", "-", ".", " ", "\t", "\n", "\r", "\v", "\u00a0", "\u2028", "\ufeff", "é", "😀", "\\"];
const atom = fc.constantFrom(
  "a", "b", "\\.", ".", "\\s", "\\S", "\\d", "\\D", "\\w", "\\W", "[a-z]", "[^a-z]", "[\\s\\d]", "[^\\S]", "[^\\s-]", "[\\w.-]",
  "\\u00e9", "\\ud83d\\ude00", "\\p{L}", "\\P{Lu}", "[\\p{Nd}_]", "[]", "[^]", "\\x41", "\\t", "[\\b]", "\\/", "[\\-]",
);
const regex: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", maxDepth: 3 },
    atom,
    fc.tuple(tie("node"), fc.constantFrom("*", "+", "?", "{2}", "{1,3}", "{0,}", "*?", "{2,}")).map(([n, q]) => `(?:${n})${q}`),
    fc.array(tie("node"), { minLength: 2, maxLength: 3 }).map((parts) => parts.join("")),
    fc.array(tie("node"), { minLength: 2, maxLength: 3 }).map((parts) => `(${parts.join("|")})`),
    tie("node").map((n) => `(${n})`),
  ),
})).node;
const anchored = fc.tuple(fc.boolean(), regex, fc.boolean(), fc.boolean()).map(([s, r, e, b]) => `${s ? "^" : ""}${b ? "\\b" : ""}${r}${e ? "$" : ""}`);
const text = fc.array(fc.constantFrom(...CHARS), { maxLength: 8 }).map((c) => c.join(""));

describe("pattern engine", () => {
  it("agrees with JavaScript's RegExp on every pattern it translates", () => {
    fc.assert(
      fc.property(anchored, fc.array(text, { minLength: 1, maxLength: 6 }), (pattern, inputs) => {
        const translated = translatePattern(pattern);
        expect(translated.ok).toBe(true);
        const native = new RegExp(pattern, "u");
        for (const input of inputs) expect(schemaRegExp(pattern).test(input), `${pattern} on ${JSON.stringify(input)}`).toBe(native.test(input));
      }),
      { numRuns: 3_000 },
    );
  });

  it("names what RE2 cannot run, and tells invalid patterns apart", () => {
    expect(translatePattern("(a)\\1")).toMatchObject({ ok: false, invalid: false, feature: "backreference" });
    expect(translatePattern("a(?=b)")).toMatchObject({ ok: false, invalid: false, feature: "lookaround", reason: "the lookahead (?=b) at offset 1 needs a backtracking engine" });
    expect(translatePattern("^.{1,5000}$")).toMatchObject({ ok: false, invalid: false, feature: "count" });
    expect(translatePattern("[z-a]")).toMatchObject({ ok: false, invalid: true });
    // Run on JavaScript's engine instead: same answers.
    expect(schemaRegExp("^(\\w)\\1$").test("aa")).toBe(true);
    expect(schemaRegExp("^(\\w)\\1$").test("ab")).toBe(false);
  });

  it("matches in linear time what backtracks exponentially on JavaScript's engine", () => {
    for (const pattern of ["^(a+)+$", "^(a|a)*$", "^(\\w+\\s?)*$", "(x+x+)+y"]) {
      expect(translatePattern(pattern).ok).toBe(true);
      expect(schemaRegExp(pattern).test(`${"a".repeat(5_000)}!`)).toBe(false);
    }
  });
});
