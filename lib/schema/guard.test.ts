import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../config/schema";
import { screenSchema } from "./guard";

const screen = (schema: unknown) => screenSchema(schema, DEFAULT_LIMITS);
const BAD = "(a";

describe("screenSchema", () => {
  it("accepts patterns that backtrack on JavaScript's engine (they run on RE2) and hands on those RE2 cannot run", () => {
    const jsOnly: string[] = [];
    const schema = {
      type: "object",
      properties: { a: { type: "string", pattern: "^(a+)+$" }, b: { pattern: "^(\\w+)-\\1$" }, c: { pattern: "(?<!x)y" } },
      patternProperties: { "^(x|x)*$": {} },
    };
    expect(screenSchema(schema, DEFAULT_LIMITS, { jsOnly: (p) => jsOnly.push(`${p.path}: ${p.reason}`) })).toEqual([]);
    expect(jsOnly).toEqual([
      "/schema/properties/c/pattern: the lookbehind (?<!x) at offset 0 needs a backtracking engine",
      "/schema/properties/b/pattern: the back-reference \\1 at offset 7 needs a backtracking engine",
    ]);
  });

  it("screens a property named like a keyword as a schema: property names are data", () => {
    const schema = { type: "object", properties: { properties: { type: "string", pattern: BAD } } };
    expect(screen(schema)).toEqual([{ path: "/schema/properties/properties/pattern", message: expect.stringMatching(/not a valid regular expression/) }]);
    const map = { type: "object", properties: { patternProperties: { type: "object", properties: { x: { pattern: BAD } } } } };
    expect(screen(map).map((e) => e.path)).toEqual(["/schema/properties/patternProperties/properties/x/pattern"]);
  });

  it("allows genserve's x-grounded annotation as a boolean, and refuses any other value", () => {
    expect(screen({ type: "object", properties: { total: { type: "number", "x-grounded": true } } })).toEqual([]);
    expect(screen({ type: "object", properties: { total: { type: "number", "x-grounded": "yes" } } })).toEqual([{ path: "/schema/properties/total/x-grounded", message: "must be true or false" }]);
  });

  it("refuses ajv's $data form of a keyword's value", () => {
    expect(screen({ type: "object", properties: { a: { const: { $data: "1/b" } } } })).toEqual([{ path: "/schema/properties/a/const/$data", message: "$data references are not supported" }]);
  });

  it("does not mistake data for schemas: a pattern inside enum, const or default is a value", () => {
    expect(screen({ type: "object", properties: { a: { enum: [{ pattern: BAD }], default: { pattern: BAD }, const: { pattern: BAD } } } })).toEqual([]);
  });

  it("screens what a local $ref points at, wherever it is in the document", () => {
    const schema = { type: "object", properties: { a: { $ref: "#/x-hidden/s" } }, "x-hidden": { s: { type: "string", pattern: BAD } } };
    expect(screen(schema).map((e) => e.path)).toEqual(["/schema/x-hidden/s/pattern"]);
    const inDefault = { type: "object", properties: { a: { $ref: "#/default/s" } }, default: { s: { pattern: BAD } } };
    expect(screen(inDefault).map((e) => e.path)).toEqual(["/schema/default/s/pattern"]);
  });

  it("counts depth through properties named 'properties', and stops deep nesting without recursion", () => {
    const nest = (levels: number) => {
      let nested: Record<string, unknown> = { type: "string" };
      for (let i = 0; i < levels; i++) nested = { type: "object", properties: { properties: nested } };
      return nested;
    };
    expect(screen(nest(40))).toEqual([{ path: `/schema${"/properties/properties".repeat(32)}`, message: expect.stringMatching(/deeper than 32 levels \(limits\.schemaDepth\)/) }]);
    const errors = screen(nest(4_000));
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/deeper than 144 levels/);
    let raw: unknown = 1;
    for (let i = 0; i < 20_000; i++) raw = [raw];
    expect(screen({ type: "object", default: raw })[0]!.message).toMatch(/deeper than 144 levels/);
  });

  it("keeps schema nesting as before: 32 levels pass, 33 do not", () => {
    const build = (levels: number) => {
      let s: Record<string, unknown> = { type: "string" };
      for (let i = 1; i < levels; i++) s = { type: "object", properties: { a: s } };
      return s;
    };
    expect(screen(build(32))).toEqual([]);
    expect(screen(build(33))[0]!.message).toMatch(/deeper than 32/);
  });

  it("follows every keyword that holds subschemas", () => {
    const at = (schema: Record<string, unknown>) => screen({ type: "object", ...schema }).map((e) => e.path);
    const p = { pattern: BAD };
    expect(at({ anyOf: [p] })).toEqual(["/schema/anyOf/0/pattern"]);
    expect(at({ items: [p] })).toEqual(["/schema/items/0/pattern"]);
    expect(at({ prefixItems: [p] })).toEqual(["/schema/prefixItems/0/pattern"]);
    expect(at({ not: p, if: {}, then: {}, else: {} })).toEqual(["/schema/not/pattern"]);
    expect(at({ dependencies: { a: ["b"], c: p } })).toEqual(["/schema/dependencies/c/pattern"]);
    expect(at({ $defs: { d: p } })).toEqual(["/schema/$defs/d/pattern"]);
    expect(at({ patternProperties: { [BAD]: {} } })).toEqual([`/schema/patternProperties/${BAD}`]);
  });

  it("handles recursive references without looping", () => {
    const tree = { type: "object", properties: { children: { type: "array", items: { $ref: "#" } } } };
    expect(screen(tree)).toEqual([]);
  });
});
