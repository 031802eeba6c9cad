import { describe, expect, it } from "vitest";
import { groundedPaths, planGrounding, ungroundedProblems } from "./grounding-check";

describe("groundedPaths", () => {
  // Definitions that each refer to the next twice expand to 2^40 paths: followed naively, a walk
  // that never ends on the event loop (a 1 MiB Kubernetes-like schema stalled the server so).
  const doubling = (marked: boolean) => {
    const defs: Record<string, unknown> = { d40: { type: "string", ...(marked && { "x-grounded": true }) } };
    for (let i = 39; i >= 0; i--) defs[`d${i}`] = { type: "object", properties: { a: { $ref: `#/$defs/d${i + 1}` }, b: { $ref: `#/$defs/d${i + 1}` } } };
    return { $ref: "#/$defs/d0", $defs: defs };
  };
  it("costs one pass over a schema that marks nothing, however its refs expand", () => {
    expect(groundedPaths(doubling(false))).toEqual([]);
  });
  it("refuses, naming /schema, marks whose refs expand past a bound, instead of walking them all", () => {
    expect(() => groundedPaths(doubling(true))).toThrow(/x-grounded/);
  });

  it("finds x-grounded through properties, items, combinators and local $refs", () => {
    const schema = {
      type: "object",
      properties: {
        total: { type: "number", "x-grounded": true },
        note: { type: "string" },
        items: { type: "array", items: { $ref: "#/$defs/item" } },
        party: { anyOf: [{ type: "null" }, { type: "object", "x-grounded": true }] },
      },
      $defs: { item: { type: "object", properties: { amount: { type: "number", "x-grounded": true } } } },
    };
    expect(groundedPaths(schema)).toEqual([["total"], ["items", "*", "amount"], ["party"]]);
  });

  it("survives recursive $refs", () => {
    const schema = { $defs: { node: { type: "object", properties: { name: { "x-grounded": true }, child: { $ref: "#/$defs/node" } } } }, $ref: "#/$defs/node" };
    expect(groundedPaths(schema)[0]).toEqual(["name"]);
  });
});

describe("ungroundedProblems", () => {
  const required = [["total"], ["items", "*", "amount"], ["party"]];
  it("names each x-grounded leaf (or leaf under an x-grounded object) not found, with why", () => {
    const problems = ungroundedProblems(
      [
        { pointer: "/total", match: "none", reason: "not_found" },
        { pointer: "/note", match: "none", reason: "not_found" },
        { pointer: "/items/0/amount", match: "exact", source: "input", start: 0, end: 2, text: "12" },
        { pointer: "/items/1/amount", match: "none", reason: "budget" },
        { pointer: "/party/name", match: "none", reason: "contradicted" },
      ],
      required,
    );
    expect(problems.map((p) => p.path)).toEqual(["/total", "/items/1/amount", "/party/name"]);
    expect(problems[0]!.message).toMatch(/not found in the input or the attachments \(x-grounded/);
    expect(problems[1]!.message).toMatch(/budget/);
  });

  it("asks nothing without x-grounded paths", () => {
    expect(ungroundedProblems([{ pointer: "/a", match: "none", reason: "not_found" }], [])).toEqual([]);
  });
});

describe("planGrounding", () => {
  it("is absent when neither asked for nor required, and lists the input and text attachments (PDFs with pages) otherwise", () => {
    expect(planGrounding(undefined, { type: "object" }, "in", [])).toBeUndefined();
    const plan = planGrounding(true, { type: "object" }, "in", [{ index: 1, mimeType: "application/pdf", text: "[page 1]\nx" }]);
    expect(plan).toEqual({ report: true, required: [], docs: [{ source: "input", text: "in" }, { source: { attachment: 1 }, text: "[page 1]\nx", pdf: true }] });
    expect(planGrounding(false, { properties: { a: { "x-grounded": true } } }, "in", [])?.report).toBe(false);
  });
});
