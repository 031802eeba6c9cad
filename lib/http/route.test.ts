import { describe, expect, it } from "vitest";
import { routePattern } from "./route";

describe("routePattern", () => {
  it("puts parameter names back in place of their values, however the path was encoded", () => {
    expect(routePattern("/api/v1/runs/run_01ABC/stream", { id: "run_01ABC" })).toBe("/api/v1/runs/[id]/stream");
    expect(routePattern("/api/v1/threads/a%3Ab", { id: "a:b" })).toBe("/api/v1/threads/[id]");
    expect(routePattern("/api/v1/threads/a:b", { id: "a:b" })).toBe("/api/v1/threads/[id]");
    expect(routePattern("/api/v1/no/such/thing", { path: ["no", "such", "thing"] })).toBe("/api/v1/[...path]");
    expect(routePattern("/api/v1/workflows", {})).toBe("/api/v1/workflows");
  });
});
