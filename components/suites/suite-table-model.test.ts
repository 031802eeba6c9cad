import { describe, expect, it } from "vitest";
import { suiteDocumentSchema } from "@/lib/api/suite-shapes";
import { asSuiteDoc, checkRows, parseValue, uniqueName, valueForKind, valueText, withRows } from "./suite-table-model";

describe("suite table model", () => {
  it("reads checks as rows and writes them back unchanged, modifiers and other case fields kept", () => {
    const c = { name: "a", input: "x", contexts: ["c1"], expect: { "/total": { approx: 10, tolerance: 0.5, min: 1 }, "/lines": { equals: [1], unordered: true }, "": { judge: "polite" } } };
    const rows = checkRows(c);
    expect(rows.map((r) => [r.path, r.kind])).toEqual([["/total", "approx"], ["/total", "min"], ["/lines", "equals"], ["", "judge"]]);
    expect(withRows(c, rows)).toEqual(c);
    expect(withRows(c, [])).toEqual({ name: "a", input: "x", contexts: ["c1"] });
  });

  it("shows and parses values so that typing round-trips", () => {
    expect(valueText("equals", "EUR")).toBe("EUR");
    expect(valueText("equals", "5")).toBe('"5"');
    expect(valueText("equals", 5)).toBe("5");
    expect(valueText("matches", "123")).toBe("123");
    expect(parseValue("equals", "EUR")).toBe("EUR");
    expect(parseValue("equals", '"5"')).toBe("5");
    expect(parseValue("equals", "[1,2]")).toEqual([1, 2]);
    expect(parseValue("matches", "123")).toBe("123");
    expect(parseValue("present", "anything")).toBe(true);
    for (const v of ["EUR", "5", 5, [1], { a: 1 }, "", "{broken"]) expect(parseValue("equals", valueText("equals", v))).toEqual(v);
    expect(valueForKind("present", "x")).toBe(true);
    expect(valueForKind("min", "x")).toBe(0);
    expect(valueForKind("oneOf", "x")).toEqual(["x"]);
  });

  it("refuses text the table cannot show, saying why", () => {
    expect(asSuiteDoc("{").ok).toBe(false);
    expect(asSuiteDoc("[]")).toMatchObject({ ok: false, reason: expect.stringContaining("object") });
    expect(asSuiteDoc('{"cases": 1}')).toMatchObject({ ok: false, reason: expect.stringContaining("cases") });
    expect(asSuiteDoc('{"cases": [{"name": "a", "input": "b"}]}').ok).toBe(true);
  });

  it("names copies uniquely, and an edited document still passes the suite's shape", () => {
    const cases = [{ name: "a (copy)" }, { name: "a" }];
    expect(uniqueName(cases, "a (copy)")).toBe("a (copy) 2");
    const c = { name: "a", input: "x", expect: { "/n": { equals: 1 } } };
    const rows = checkRows(c).map((r) => ({ ...r, kind: "max" as const, value: valueForKind("max", r.value) }));
    expect(suiteDocumentSchema.safeParse({ cases: [withRows(c, rows)] }).success).toBe(true);
  });
});
