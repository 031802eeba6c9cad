import { describe, expect, it } from "vitest";
import { diffJson } from "./structural-diff";

describe("diffJson", () => {
  it("lists added, removed and changed fields by pointer", () => {
    expect(
      diffJson({ a: 1, b: { c: [1, 2, 3], d: "x" }, gone: true }, { a: 1, b: { c: [1, 5], d: "y", "e/f": null } }),
    ).toEqual([
      { path: "/b/c/1", kind: "changed", left: 2, right: 5 },
      { path: "/b/c/2", kind: "removed", left: 3 },
      { path: "/b/d", kind: "changed", left: "x", right: "y" },
      { path: "/b/e~1f", kind: "added", right: null },
      { path: "/gone", kind: "removed", left: true },
    ]);
  });

  it("finds nothing between equal values and a change between different types", () => {
    expect(diffJson({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toEqual([]);
    expect(diffJson("x", ["x"])).toEqual([{ path: "/", kind: "changed", left: "x", right: ["x"] }]);
  });
});
