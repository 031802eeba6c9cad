import { describe, expect, it } from "vitest";
import { safeReturnTo } from "./return-to";

describe("safeReturnTo", () => {
  it("keeps paths of this site", () => {
    expect(safeReturnTo("/runs?status=failed#top")).toBe("/runs?status=failed#top");
    expect(safeReturnTo("/")).toBe("/");
  });
  it("refuses anything that could leave the site", () => {
    for (const bad of ["https://evil.example/", "//evil.example/x", "/\\evil.example", "\\\\evil.example", "javascript:alert(1)", "/\t/evil.example", "evil.example", "", null, undefined]) {
      expect(safeReturnTo(bad)).toBe("/");
    }
  });
  it("refuses paths that only become another origin once normalised", () => {
    for (const bad of ["/.//evil.example/x", "/..//evil.example", "/%2e//evil.example", "/%2E%2E//evil.example", "/a/..//evil.example", "/./\\evil.example"]) {
      expect(safeReturnTo(bad)).toBe("/");
    }
    expect(safeReturnTo("/runs/./x/../y")).toBe("/runs/y");
  });
});
