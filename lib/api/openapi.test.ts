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

  it("names every shape it refers to: each $ref is a component of the document", async () => {
    const document = (await import("./openapi")).buildOpenApiDocument("v1") as { components: { schemas: Record<string, unknown> } };
    const refs = new Set([...JSON.stringify(document).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!));
    expect(refs.size).toBeGreaterThan(10);
    const components = Object.keys(document.components.schemas);
    // A shape named on zod's global registry instead of `named()` comes out under "__shared" with a
    // reference no OpenAPI tool can follow.
    expect(components.filter((c) => c.startsWith("__"))).toEqual([]);
    expect([...refs].filter((ref) => !components.some((c) => ref === `#/components/schemas/${c}`))).toEqual([]);
  });
});
