import { describe, expect, it, vi } from "vitest";

// Next.js bundles lib/api once per server layer: the docs page, the OpenAPI route and the SSR of a
// client page such as /suites each load their own copy, some only in part. The document must not
// depend on how many copies were loaded before it (issue 32, 4.1: after /suites, GET
// /api/v1/openapi.json answered 500 `Duplicate schema id "Callback"` until a restart).
describe("the OpenAPI document", () => {
  it("is built the same whatever other copies of the API modules were loaded since", async () => {
    const first = await import("./openapi");
    const before = JSON.stringify(first.buildOpenApiDocument("v1"));
    // A second, partial copy, as the SSR of the suites page loads it (suites.ts and what it imports).
    vi.resetModules();
    await import("./suites");
    expect(JSON.stringify(first.buildOpenApiDocument("v1"))).toBe(before);
    // And a whole one.
    vi.resetModules();
    const second = await import("./openapi");
    expect(JSON.stringify(second.buildOpenApiDocument("v1"))).toBe(before);
    expect(JSON.stringify(first.buildOpenApiDocument("v1"))).toBe(before);
  });
});
