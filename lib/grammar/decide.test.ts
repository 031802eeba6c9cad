import Ajv from "ajv";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { decide } from "./decide";

// The finite-domain evaluator against ajv (draft-07, genserve's options): where it gives a verdict,
// it must be ajv's.

const ajv = new Ajv({ strict: false, allErrors: true, ownProperties: true, loopRequired: 0 });
addFormats(ajv);
const verdictOf = (schema: Record<string, unknown>, value: unknown) => ajv.compile(schema)(value);

const CASES: { schema: Record<string, unknown>; values: unknown[] }[] = [
  { schema: { not: { type: "string" } }, values: ["a", 1, null, [], {}] },
  { schema: { not: { not: { minItems: 1 } } }, values: [[], [1], "x"] },
  { schema: { multipleOf: 1 }, values: [1e21, 3, 2.5, -0] },
  { schema: { multipleOf: 0.1 }, values: [0.3, 0.5, 1, 1e-7] },
  { schema: { type: "integer", not: { multipleOf: 0.123456789 } }, values: [1e308, 0, 2] },
  { schema: { uniqueItems: true }, values: [[1, 2], [1, 1], [{ a: 1 }, { a: 1 }], [[1], [1, 2]], [1, 1.0]] },
  { schema: { contains: { const: 2 } }, values: [[], [1], [1, 2], "x"] },
  { schema: { if: { properties: { kind: { const: "a" } } }, then: { required: ["a"] }, else: { required: ["b"] } }, values: [{ kind: "a" }, { kind: "a", a: 1 }, { b: 1 }, {}, 3] },
  { schema: { oneOf: [{ type: "integer" }, { minimum: 2 }] }, values: [1, 3, 2.5, "x"] },
  { schema: { anyOf: [{ maxLength: 1 }, { pattern: "^a" }] }, values: ["", "bc", "abc", 5] },
  { schema: { properties: { a: { type: "string" } }, patternProperties: { "^x-": { type: "integer" } }, additionalProperties: false }, values: [{ a: "s" }, { a: 1 }, { "x-y": 1 }, { "x-y": "s" }, { b: 1 }] },
  { schema: { propertyNames: { maxLength: 1 }, minProperties: 1 }, values: [{}, { a: 1 }, { ab: 1 }] },
  { schema: { dependencies: { a: ["b"], c: { required: ["d"] } } }, values: [{ a: 1 }, { a: 1, b: 2 }, { c: 1 }, { c: 1, d: 1 }, {}] },
  { schema: { required: ["toString"] }, values: [{}, { toString: 1 }] },
  { schema: { items: [{ type: "integer" }, { type: "string" }], additionalItems: false }, values: [[1, "a"], [1, "a", 2], ["a"], [1]] },
  { schema: { items: { type: "integer" }, additionalItems: false, maxItems: 2 }, values: [[1, 2], [1, 2, 3], [1, "a"]] },
  { schema: { $ref: "#/definitions/n", definitions: { n: { type: "integer", minimum: 5 } } }, values: [4, 5, "5"] },
  { schema: { minLength: 2, maxLength: 2 }, values: ["é€", "😀😀", "😀", "abc"] },
  // ajv skips a property named __proto__: the key counts as additional (JSON.parse keeps it an own key).
  { schema: JSON.parse('{"properties": {"__proto__": {"type": "string"}}, "additionalProperties": false}'), values: [JSON.parse('{"__proto__": "s"}'), {}] },
  // ajv#2077: without loopRequired 0, a missing "" key is not reported where ajv stops at the first error (inside `not`).
  { schema: { not: { type: "object", required: [""] } }, values: [{ a: 1 }, { "": 1 }, 1] },
  { schema: JSON.parse('{"properties": {"__proto__": {"type": "string"}}, "additionalProperties": {"type": "integer"}}'), values: [JSON.parse('{"__proto__": "s"}'), JSON.parse('{"__proto__": 1}')] },
];

describe("decide: a JSON Schema verdict on one value, as ajv gives it", () => {
  for (const { schema, values } of CASES) {
    it(JSON.stringify(schema), () => {
      for (const value of values) expect(decide(value, schema, schema), JSON.stringify(value)).toBe(verdictOf(schema, value));
    });
  }

  it("compares JSON by own keys (ajv's own equality throws on these: ajv-validator/ajv#2624)", () => {
    const schema = { enum: [{ valueOf: 1 }, [1, { toString: "x" }]] };
    expect([{ valueOf: 1 }, [1, { toString: "x" }], { valueOf: 2 }].map((v) => decide(v, schema, schema))).toEqual([true, true, false]);
  });

  it("gives no verdict where it cannot be sure: checked formats, draft-dependent keywords, other references", () => {
    expect(decide("x", { format: "email" }, {})).toBeUndefined();
    expect(decide("x", { format: "not-a-checked-format" }, {})).toBe(true);
    expect(decide([1], { prefixItems: [{ const: 2 }] }, {})).toBeUndefined();
    expect(decide([1], { contains: { const: 1 }, minContains: 2 }, {})).toBeUndefined();
    // Keywords whose meaning the undecided ones change are not decided either (found by the grammar
    // fuzzer, seed 1171276691): beside prefixItems, items covers only the rest; minContains 0 needs no match.
    expect(decide(['"'], { items: { pattern: "\\." }, prefixItems: [true] }, {})).toBeUndefined();
    expect(decide(["a"], { contains: { const: 1 }, minContains: 0 }, {})).toBeUndefined();
    expect(decide(1, { $ref: "other.json#/a" }, {})).toBeUndefined();
    expect(decide(1, { $ref: "#/nowhere" }, {})).toBeUndefined();
    expect(decide(null, { type: "string", nullable: true }, {})).toBeUndefined();
    // A failing keyword decides even beside an uncertain one.
    expect(decide(3, { type: "string", format: "email" }, {})).toBe(false);
  });

  it("stops on recursion within its bounds", () => {
    const schema = { $ref: "#/definitions/a", definitions: { a: { anyOf: [{ $ref: "#/definitions/a" }, { $ref: "#/definitions/a" }] } } };
    expect(decide(1, schema, schema)).toBeUndefined();
  });
});
