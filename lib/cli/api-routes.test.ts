import path from "node:path";
import { describe, expect, it } from "vitest";
import { compareRoutes, findRouteFiles, matchRoute } from "./api-routes";

const APP = path.resolve(import.meta.dirname, "..", "..", "app");

describe("the API's routes, found as Next.js finds them", () => {
  const routes = findRouteFiles(APP).sort(compareRoutes);
  const match = (pathname: string) => {
    const found = matchRoute(routes, pathname);
    return found && { file: path.relative(APP, found.route.file), params: found.params };
  };

  it("matches static segments, [param] and [...rest], decoding parameters", () => {
    expect(match("/api/v1/generate/text")).toEqual({ file: "api/v1/generate/text/route.ts", params: {} });
    expect(match("/api/v1/runs/run_01ABC/stream")).toEqual({ file: "api/v1/runs/[id]/stream/route.ts", params: { id: "run_01ABC" } });
    expect(match("/api/v1/workflows/my%20flow")).toEqual({ file: "api/v1/workflows/[slug]/route.ts", params: { slug: "my flow" } });
    expect(match("/healthz")).toEqual({ file: "healthz/route.ts", params: {} });
  });

  it("prefers a static route to a parameter, and both to the catch-all", () => {
    expect(match("/api/v1/runs")).toEqual({ file: "api/v1/runs/route.ts", params: {} });
    expect(match("/api/v1/runs/run_1/deliveries/redeliver")?.file).toBe("api/v1/runs/[id]/deliveries/redeliver/route.ts");
    expect(match("/api/v1/runs/run_1/nothing")).toEqual({ file: "api/v1/[...path]/route.ts", params: { path: ["runs", "run_1", "nothing"] } });
    expect(match("/api/v1/nope")).toEqual({ file: "api/v1/[...path]/route.ts", params: { path: ["nope"] } });
  });

  it("leaves paths with a trailing slash or an empty segment unmatched", () => {
    expect(match("/api/v1/runs/")).toBeNull();
    expect(match("/api/v1//runs")?.file).toBe("api/v1/[...path]/route.ts");
    expect(match("/nothing/here")).toBeNull();
  });

  it("goes on to the next route when a catch-all has nothing left to take", () => {
    const routes = [{ segments: ["api", "v1", "*path"] }, { segments: [":x", "v1"] }].sort(compareRoutes);
    expect(matchRoute(routes, "/api/v1")).toEqual({ route: { segments: [":x", "v1"] }, params: { x: "api" } });
  });
});
