import { describe, expect, it } from "vitest";
import { expectationSchema, suiteDocumentSchema } from "../api/suite-shapes";
import { checkOutput, lookup, matches } from "./expect";

const INVOICE = {
  number: "INV-7",
  total: 120.5,
  currency: "EUR",
  lines: [{ description: "One Chair", qty: 1 }],
  vendor: { name: "Acme", vat: "DE1" },
  "a/b": { "c~d": 1 },
  tags: ["x", "y", "z"],
  note: null,
};

const verdicts = (expect: Record<string, unknown>, output: unknown = INVOICE) =>
  checkOutput(output, expect as never).checks.map((c) => [c.path, c.check, c.pass, c.reason ?? ""] as const);

describe("expectations on fields", () => {
  it("checks every kind, passing", () => {
    const results = verdicts({
      "/number": { equals: "INV-7" },
      "/total": { approx: 120.5, tolerance: 0.01, min: 100, max: 200 },
      "/currency": { oneOf: ["EUR", "USD"] },
      "/lines": { length: { min: 1, max: 3 } },
      "/lines/0/description": { matches: "(?i)chair" },
      "/missing": { absent: true },
      "/note": { present: true },
      "/vendor": { equals: { name: "Acme" }, partial: true },
      "/tags": { equals: ["z", "x", "y"], unordered: true, contains: "y", length: 3 },
      "/a~1b/c~0d": { equals: 1 },
      "/number/": { absent: true },
    });
    expect(results.filter(([, , pass]) => !pass)).toEqual([]);
    expect(results).toHaveLength(15);
  });

  it("fails each kind with the value it saw and why", () => {
    const results = verdicts({
      "/number": { equals: "INV-8" },
      "/total": { approx: 120, tolerance: 0.1, min: 121, max: 120 },
      "/currency": { oneOf: ["USD"] },
      "/lines": { length: 2 },
      "/lines/0/description": { matches: "^chair$" },
      "/note": { absent: true },
      "/nowhere": { present: true },
      "/vendor": { equals: { name: "Acme" } },
      "/tags": { equals: ["z", "x", "q"], unordered: true, contains: "w" },
      "/currency/0": { equals: "E" },
    });
    expect(results.filter(([, , pass]) => pass)).toEqual([]);
    expect(Object.fromEntries(results.map(([path, check, , reason]) => [`${path} ${check}`, reason]))).toEqual({
      "/number equals": 'expected "INV-8", got "INV-7"',
      "/total approx": "expected 120 ± 0.1, got 120.5",
      "/total min": "expected at least 121, got 120.5",
      "/total max": "expected at most 120, got 120.5",
      "/currency oneOf": 'expected one of ["USD"], got "EUR"',
      "/lines length": "expected length 2, got 1",
      "/lines/0/description matches": 'does not match /^chair$/: "One Chair"',
      "/note absent": "is present: null",
      "/nowhere present": "is missing",
      "/vendor equals": 'expected {"name":"Acme"}, got {"name":"Acme","vat":"DE1"}',
      "/tags equals": 'expected ["z","x","q"] (any order), got ["x","y","z"]',
      "/tags contains": 'no item matches "w"',
      "/currency/0 equals": "is missing",
    });
  });

  it("fails checks of the wrong type instead of throwing, and reports a missing field for every check on it", () => {
    expect(verdicts({ "/number": { min: 1, approx: 7, length: 1, matches: "x" } }, { number: 7 }).map(([, check, pass, reason]) => [check, pass, reason])).toEqual([
      ["approx", true, ""],
      ["min", true, ""],
      ["length", false, "expected a string, array or object, got number"],
      ["matches", false, "expected a string, got number"],
    ]);
    expect(verdicts({ "/x/y": { equals: 1, min: 0, contains: "a" } }, { x: [1] }).map(([, , pass, reason]) => [pass, reason])).toEqual([
      [false, "is missing"],
      [false, "is missing"],
      [false, "is missing"],
    ]);
    // Array tokens: digits only, no leading zeros, no "-".
    expect(lookup({ a: [5, 6] }, "/a/01")).toEqual({ found: false });
    expect(lookup({ a: [5, 6] }, "/a/-")).toEqual({ found: false });
    expect(lookup({ a: [5, 6] }, "/a/1")).toEqual({ found: true, value: 6 });
    expect(lookup("text", "")).toEqual({ found: true, value: "text" });
    // Own keys only: nothing inherited is found.
    expect(lookup({}, "/constructor")).toEqual({ found: false });
  });

  it("compares numbers by value, objects as subsets only when partial, arrays in any order only when unordered", () => {
    expect(matches({ a: 1.0, b: [1, { c: 2, d: 3 }] }, { a: 1, b: [1, { c: 2 }] }, { partial: true })).toBe(true);
    expect(matches({ a: 1, b: [1, { c: 2, d: 3 }] }, { a: 1, b: [1, { c: 2 }] }, {})).toBe(false);
    expect(matches([1, 2, 2], [2, 1, 2], { unordered: true })).toBe(true);
    expect(matches([1, 1, 2], [2, 1, 2], { unordered: true })).toBe(false);
    // A greedy pairing would take {a:1,b:2} for the first expected item and fail; augmenting paths do not.
    expect(matches([{ a: 1, b: 2 }, { a: 1 }], [{ a: 1 }, { a: 1, b: 2 }], { unordered: true, partial: true })).toBe(true);
    expect(matches([[1, 2], { a: [3, 4] }], [{ a: [4, 3] }, [2, 1]], { unordered: true })).toBe(true);
    expect(matches([1.0, "1"], ["1", 1], { unordered: true })).toBe(true);
    expect(matches([1, "1"], ["1", "1"], { unordered: true })).toBe(false);
    // Large arrays in any order: a multiset comparison, fast whatever the size.
    const big = Array.from({ length: 50_000 }, (_, i) => ({ i }));
    expect(matches(big, [...big].reverse(), { unordered: true })).toBe(true);
    // As subsets in any order (a pairing, quadratic), arrays are bounded; past the bound the check fails saying why.
    const subsets = verdicts({ "/a": { equals: Array.from({ length: 201 }, () => ({})), partial: true, unordered: true } }, { a: Array.from({ length: 201 }, (_, i) => ({ i })) });
    expect(subsets).toEqual([["/a", "equals", false, "arrays of more than 200 items are not compared as subsets in any order; drop partial or unordered"]]);
    expect(matches(null, {}, { partial: true })).toBe(false);
    expect(matches([], {}, { partial: true })).toBe(false);
  });

  it("hands judge checks back to be decided, with the field they judge", () => {
    const { checks, judges } = checkOutput({ summary: "ok" }, { "/summary": { judge: "is polite", present: true }, "/gone": { judge: { criterion: "exists", workflow: "grader" } } } as never);
    expect(checks.map((c) => c.check)).toEqual(["present"]);
    expect(judges).toEqual([
      { path: "/summary", criterion: "is polite", workflow: undefined, field: { found: true, value: "ok" } },
      { path: "/gone", criterion: "exists", workflow: "grader", field: { found: false } },
    ]);
  });
});

describe("the grounded expectation", () => {
  const grounding = [
    { pointer: "/total", match: "normalized" as const, source: "input" as const, start: 7, end: 15, text: "1.234,50" },
    { pointer: "/party/name", match: "exact" as const, source: "input" as const, start: 0, end: 4, text: "Acme" },
    { pointer: "/party/city", match: "none" as const, reason: "not_found" as const },
  ];
  const output = { total: 1234.5, party: { name: "Acme", city: "Paris" } };
  it("passes when every value at or under the field was found, and names those that were not", () => {
    const { checks } = checkOutput(output, { "/total": { grounded: true }, "/party": { grounded: true }, "/gone": { grounded: true } }, grounding);
    expect(checks.map((c) => [c.path, c.pass, c.reason])).toEqual([
      ["/total", true, undefined],
      ["/party", false, "not found in the input or attachments: /party/city (not_found)"],
      ["/gone", false, "is missing"],
    ]);
  });
  it("fails saying so when the run reported no grounding", () => {
    expect(checkOutput(output, { "/total": { grounded: true } }).checks[0]!.reason).toBe("the run reported no grounding");
  });
});

describe("the suite document's shape", () => {
  const problems = (value: unknown) => {
    const result = suiteDocumentSchema.safeParse(value);
    return result.success ? [] : result.error.issues.map((i) => `${i.path.map(String).join(" ")}: ${i.message}`);
  };

  it("accepts the documented example", () => {
    expect(
      problems({
        suite: "invoice-extraction",
        workflow: "extract-invoice",
        schema: { type: "object" },
        repeat: 2,
        cases: [{ name: "simple", input: "Invoice INV-7", contexts: ["vendors"], expect: { "/number": { equals: "INV-7" }, "/note": { absent: true }, "": { present: true } } }],
      }),
    ).toEqual([]);
  });

  it("refuses what cannot be meant, naming where", () => {
    expect(
      problems({
        cases: [
          { name: "a", input: "x", expect: { total: { equals: 1 }, "/t": {}, "/u": { tolerance: 1 }, "/v": { absent: true, equals: 1 }, "/w": { approx: Number.NaN }, "/x": { judge: "good" }, "/y": { min: 3, max: 1 } } },
          { name: "a", input: "" },
        ],
      }),
    ).toEqual([
      "cases 0 expect /t: must hold at least one check: equals, oneOf, approx, min, max, length, matches, contains, absent, present, grounded, judge",
      "cases 0 expect /u: must hold at least one check: equals, oneOf, approx, min, max, length, matches, contains, absent, present, grounded, judge",
      "cases 0 expect /u tolerance: applies to approx, which is missing",
      "cases 0 expect /v absent: cannot be combined with other checks",
      "cases 0 expect /w approx: must be a finite number (approx)",
      "cases 0 expect /y min: must not be above max",
      'cases 0 expect total: must be a JSON Pointer such as "/total" or "/lines/0/description" ("" for the whole output)',
      "cases 1 input: must be at least 1 character",
    ]);
    // Checks that need the whole suite run once its cases parse.
    expect(problems({ cases: [{ name: "a", input: "x", expect: { "/x": { judge: "good" } } }, { name: "a", input: "y" }] })).toEqual([
      "cases 0 expect /x judge: names no workflow, and the suite has no judgeWorkflow",
      "cases 1 name: repeats the name of case 0; names must be unique",
    ]);
    expect(expectationSchema.safeParse({ length: { min: 4, max: 2 } }).success).toBe(false);
  });
});
