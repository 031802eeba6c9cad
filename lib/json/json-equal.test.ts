import { describe, expect, it } from "vitest";
import { jsonEqual } from "./json-equal.mjs";

describe("jsonEqual", () => {
  it("compares JSON values deeply, by own keys in any order", () => {
    expect(jsonEqual({ a: [1, { b: null }], c: "x" }, { c: "x", a: [1, { b: null }] })).toBe(true);
    expect(jsonEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(jsonEqual({ a: undefined }, { b: undefined })).toBe(false);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonEqual([], {})).toBe(false);
    expect(jsonEqual({}, [])).toBe(false);
    expect(jsonEqual(1, 1.0)).toBe(true);
    expect(jsonEqual("1", 1)).toBe(false);
    expect(jsonEqual(null, {})).toBe(false);
  });

  it("treats valueOf, toString and __proto__ as data, never calling them", () => {
    const parse = (text: string) => JSON.parse(text) as unknown;
    expect(jsonEqual(parse('{"valueOf": 1}'), parse('{"valueOf": 1}'))).toBe(true);
    expect(jsonEqual(parse('{"valueOf": 1}'), parse('{"valueOf": 2}'))).toBe(false);
    expect(jsonEqual({}, parse('{"toString": ""}'))).toBe(false);
    expect(jsonEqual(parse('{"__proto__": {"a": 1}}'), parse('{"__proto__": {"a": 1}}'))).toBe(true);
    expect(jsonEqual(parse('{"__proto__": {"a": 1}}'), {})).toBe(false);
    expect(jsonEqual({}, parse('{"toString": null}'))).toBe(false);
  });
});
