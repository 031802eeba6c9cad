import { z } from "zod";
import { describe, expect, it, vi } from "vitest";
import { openApiDocument } from "./table";

type Doc = { paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>> };

/** Each operation as `METHOD path operationId codes`. */
const operations = (doc: Doc) =>
  Object.entries(doc.paths)
    .flatMap(([path, item]) => Object.entries(item).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId} ${Object.keys(op.responses).sort().join(",")}`))
    .sort();

// The document was checked equal, field for field, to the hand-written one it replaced (54
// operations) before that one was deleted: commit "One route table (lib/http/table.ts)…".
describe("the document generated from the route table", () => {
  it("is byte for byte the same whatever modules were loaded, and schemas rendered, before it", async () => {
    // Next.js loads lib/ once per server layer (route handlers, pages, the SSR of client pages), some
    // copies only in part; a document built from a registry they all fill failed with "Duplicate
    // schema id" once a page had loaded first (issue 32, 4.1).
    vi.resetModules();
    await import("./handlers/shares");
    await import("../api/suite-shapes");
    const first = await import("./table");
    const text = JSON.stringify(first.openApiDocument("v1"));
    expect(text).toContain('"operationId":"getShared"');
    // Another whole copy, built first and again.
    vi.resetModules();
    const second = await import("./table");
    expect(JSON.stringify(second.openApiDocument("v1"))).toBe(text);
    // A partial copy with shapes rendered on their own (as the docs of one shape would).
    vi.resetModules();
    const responses = await import("../api/responses");
    z.toJSONSchema(responses.runDetailSchema, { unrepresentable: "any" });
    await import("./handlers/evaluations");
    expect(JSON.stringify(first.openApiDocument("v1"))).toBe(text);
    expect(JSON.stringify(second.openApiDocument("v1"))).toBe(text);
    const third = await import("./table");
    expect(JSON.stringify(third.openApiDocument("v1"))).toBe(text);
  });

  it("has each entry of the table as its operation, each operation id once", async () => {
    const { ENDPOINTS } = await import("./table");
    const document = openApiDocument("v1") as Doc;
    for (const entry of ENDPOINTS) expect(document.paths[entry.path]?.[entry.method.toLowerCase()]?.operationId, `${entry.method} ${entry.path}`).toBe(entry.operationId);
    expect(new Set(ENDPOINTS.map((e) => e.operationId)).size).toBe(ENDPOINTS.length);
    expect(operations(document)).toHaveLength(ENDPOINTS.length);
  });

  it("names every shape it refers to: each $ref is a component of the document", () => {
    const document = openApiDocument("v1") as { components: { schemas: Record<string, unknown> } };
    const refs = new Set([...JSON.stringify(document).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!));
    expect(refs.size).toBeGreaterThan(10);
    const components = Object.keys(document.components.schemas);
    // A shape named on zod's global registry instead of `named()` comes out under "__shared" with a
    // reference no OpenAPI tool can follow.
    expect(components.filter((c) => c.startsWith("__"))).toEqual([]);
    expect([...refs].filter((ref) => !components.some((c) => ref === `#/components/schemas/${c}`))).toEqual([]);
  });
});
