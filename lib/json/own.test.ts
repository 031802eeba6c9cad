import { describe, expect, it } from "vitest";
import { own, setOwn } from "./own";

describe("own properties", () => {
  it("finds no inherited member", () => {
    expect(own({}, "toString")).toBeUndefined();
    expect(own({}, "__proto__")).toBeUndefined();
    expect(own({ toString: 1 }, "toString")).toBe(1);
    expect(own(JSON.parse('{"__proto__": {"a": 1}}'), "__proto__")).toEqual({ a: 1 });
    expect(own(null, "a")).toBeUndefined();
    expect(own("text", "length")).toBeUndefined();
  });

  it("writes __proto__ as a property, leaving the prototype alone", () => {
    const target: Record<string, unknown> = {};
    setOwn(target, "__proto__", { polluted: true });
    expect(Object.getPrototypeOf(target)).toBe(Object.prototype);
    expect(JSON.stringify(target)).toBe('{"__proto__":{"polluted":true}}');
    expect(target).toEqual(JSON.parse('{"__proto__":{"polluted":true}}'));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
