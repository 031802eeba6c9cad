import { beforeAll, describe, expect, it } from "vitest";
import { CALLBACK, INVOICE_SCHEMA } from "../helpers/config";
import type { FakeUpstream } from "../helpers/fake-upstream";
import { useGenserve } from "../helpers/suite";
import { cli, createKey, get, post, type GenserveServer } from "../helpers/genserve";

const ctx = useGenserve(`
limits:
  bodyBytes: 200000
  inputBytes: 1000
  schemaBytes: 8000
  schemaDepth: 12
  schemaProperties: 50
  schemaEnumValues: 40
  attachments: 2
`);
let upstream: FakeUpstream;
let server: GenserveServer;
let key: string;
beforeAll(() => void ({ upstream, server, key } = ctx));

const body = (extra: Record<string, unknown> = {}) => ({
  input: "hello",
  type: "event",
  callback: CALLBACK,
  workflowSlug: "extract-invoice",
  schema: INVOICE_SCHEMA,
  ...extra,
});
const generate = (payload: unknown, headers?: Record<string, string>) => post(server, "/api/v1/generate/object", payload, key, headers);

function expectProblem(res: Awaited<ReturnType<typeof post>>, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.json).toMatchObject({ status, code, type: `/docs#error-${code}`, title: expect.any(String), detail: expect.any(String) });
}

describe("request validation", () => {
  it("names every offending field in one 400", async () => {
    const res = await generate({ input: "", type: "events", callback: { url: "ftp://x", headers: { "Bad Header": "x" } }, schema: { type: "number" }, extra: true });
    expectProblem(res, 400, "validation_failed");
    const paths = res.json.errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(expect.arrayContaining(["/input", "/type", "/callback/url", "/workflowSlug", "/extra", "/schema/type"]));
    expect(paths.some((p: string) => p.startsWith("/callback/headers"))).toBe(true);
    expect(upstream.requests).toHaveLength(0);
  });

  it("reports malformed JSON, a non-object body, a wrong media type and an empty body", async () => {
    expectProblem(await generate("{not json"), 400, "validation_failed");
    expectProblem(await generate("[1,2]"), 400, "validation_failed");
    expectProblem(await generate(""), 400, "validation_failed");
    expectProblem(await post(server, "/api/v1/generate/object", JSON.stringify(body()), key, { "content-type": "text/plain" }), 415, "unsupported_media_type");
  });

  it("enforces the body and input limits with 413 naming the limit", async () => {
    const big = await generate(body({ input: "x".repeat(250_000) }));
    expectProblem(big, 413, "payload_too_large");
    expect(big.json.detail).toContain("200000 bytes");
    const input = await generate(body({ input: "é".repeat(600) }));
    expectProblem(input, 413, "payload_too_large");
    expect(input.json.errors).toEqual([{ path: "/input", message: "is larger than 1000 bytes" }]);
  });

  it("answers 404 for unknown workflows and contexts, naming them", async () => {
    const wf = await generate(body({ workflowSlug: "nope" }));
    expectProblem(wf, 404, "workflow_not_found");
    expect(wf.json.errors).toEqual([{ path: "/workflowSlug", message: 'unknown workflow "nope"' }]);
    // Names of Object members are names like any other (the fuzzer found "toString" answering 500).
    for (const name of ["toString", "constructor", "hasOwnProperty"]) {
      expectProblem(await generate(body({ workflowSlug: name })), 404, "workflow_not_found");
      expectProblem(await generate(body({ contextSlugs: [name] })), 404, "context_not_found");
    }
    const ctx = await generate(body({ contextSlugs: ["tone", "missing"] }));
    expectProblem(ctx, 404, "context_not_found");
    expect(ctx.json.errors).toEqual([{ path: "/contextSlugs/1", message: 'unknown context "missing"' }]);
  });

  it("validates attachments: shape, base64, mime type, UTF-8 and count", async () => {
    const noType = await generate(body({ attachments: [{ file: Buffer.from("hi").toString("base64") }] }));
    expectProblem(noType, 400, "validation_failed");
    expect(noType.json.errors).toEqual([{ path: "/attachments/0/mimeType", message: "is required for inline content" }]);
    expectProblem(await generate(body({ attachments: [{ file: "%%%not-base64", mimeType: "text/plain" }] })), 400, "validation_failed");
    const pdf = await generate(body({ attachments: [{ file: "JVBERi0xLjQK", mimeType: "application/pdf" }] }));
    expectProblem(pdf, 422, "attachment_unreadable");
    expect(pdf.json.detail).toContain("attachments[0]");
    const zip = await generate(body({ attachments: [{ file: Buffer.from("PK\u0003\u0004rest").toString("base64"), mimeType: "application/zip" }] }));
    expectProblem(zip, 415, "unsupported_media_type");
    const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9]).toString("base64");
    expectProblem(await generate(body({ attachments: [{ file: latin1, mimeType: "text/plain" }] })), 400, "validation_failed");
    const three = Array.from({ length: 3 }, () => ({ file: "aGk=", mimeType: "text/plain" }));
    expectProblem(await generate(body({ attachments: three })), 413, "payload_too_large");
  });
});

describe("hostile and invalid schemas", () => {
  const cases: [string, unknown, string | RegExp, RegExp][] = [
    ["remote $ref", { type: "object", properties: { a: { $ref: "https://evil.example/s.json" } } }, "/schema/properties/a/$ref", /only local references/],
    ["$data", { type: "object", properties: { a: { const: { $data: "1/b" } } } }, "/schema/properties/a/const/$data", /\$data/],
    // Patterns run on RE2; only those it cannot run (here a lookaround) are analysed, and refused when they backtrack.
    ["catastrophic regex", { type: "object", properties: { a: { type: "string", pattern: "^(a|a)*(?!b)$" } } }, "/schema/properties/a/pattern", /lookahead \(\?!b\).*backtrack in exponential time/],
    ["unsafe patternProperties", { type: "object", patternProperties: { "(x|x)*(?=y)": {} } }, "/schema/patternProperties/(x|x)*(?=y)", /backtrack in exponential time/],
    ["invalid regex", { type: "object", properties: { a: { type: "string", pattern: "([" } } }, "/schema/properties/a/pattern", /not a valid regular expression/],
    ["too deep", nest(20), /^\/schema(\/properties\/a){12}$/, /deeper than 12 levels \(limits.schemaDepth\)/],
    ["too many properties", { type: "object", properties: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`p${i}`, { type: "string" }])) }, "/schema", /51 properties.*limits.schemaProperties/],
    ["too many enum values", { type: "string", enum: Array.from({ length: 41 }, (_, i) => `v${i}`) }, "/schema", /41 enum values.*limits.schemaEnumValues/],
    ["too large", { type: "object", description: "x".repeat(9000) }, "/schema", /limits.schemaBytes/],
    ["not a JSON Schema", { type: "object", properties: { a: { type: "strin" } } }, "/schema/properties/a/type", /must be one of \["array","boolean","integer","null","number","object","string"\]/],
    ["top-level number", { type: "number" }, "/schema/type", /must be "object", "array" or "string"/],
    ["string without enum", { type: "string" }, "/schema/enum", /non-empty enum/],
    ["no type", { properties: {} }, "/schema/type", /is required at the top level/],
    ["unresolvable $ref", { type: "object", properties: { a: { $ref: "#/$defs/missing" } } }, "/schema", /cannot be compiled/],
  ];

  it.each(cases)("refuses %s with a 400 naming it", async (_name, schema, path, message) => {
    const res = await generate(body({ schema }));
    expectProblem(res, 400, "validation_failed");
    const match = res.json.errors.find((e: { path: string }) => (typeof path === "string" ? e.path === path : path.test(e.path)));
    expect(match, JSON.stringify(res.json.errors)).toBeDefined();
    expect(match.message).toMatch(message);
  });

  it("stays responsive while hostile schemas are analysed and refused", async () => {
    // Lookaheads keep these off RE2, so each distinct one gets a ReDoS analysis (off the event loop).
    const hostile = Array.from({ length: 20 }, (_, i) =>
      generate(body({ schema: { type: "object", properties: { a: { type: "string", pattern: `^(\\w+\\s?)*(?!x${i % 5})$` } } } })),
    );
    const health = await get(server, "/healthz", null);
    expect(health.status).toBe(200);
    for (const res of await Promise.all(hostile)) expect(res.status).toBe(400);
  });

  it("accepts draft-07 schemas with definitions and tuple items", async () => {
    upstream.reply({ content: '{"pair": ["a", 1], "kind": "x"}' });
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { pair: { type: "array", items: [{ type: "string" }, { type: "integer" }] }, kind: { $ref: "#/definitions/kind" } },
      definitions: { kind: { type: "string", enum: ["x", "y"] } },
    };
    const res = await generate(body({ schema }));
    expect(res.status).toBe(200);
    expect(res.json.object).toEqual({ pair: ["a", 1], kind: "x" });
  });
});

describe("authentication", () => {
  it("needs an API key in the Api-Key header", async () => {
    expectProblem(await post(server, "/api/v1/generate/object", body(), null), 401, "unauthorized");
    expectProblem(await post(server, "/api/v1/generate/object", body(), "gs_" + "x".repeat(43)), 401, "unauthorized");
    expectProblem(await post(server, "/api/v1/generate/object", body(), "not-a-key"), 401, "unauthorized");
    const viaQuery = await post(server, `/api/v1/generate/object?api_key=${key}`, body(), null);
    expectProblem(viaQuery, 401, "unauthorized");
    expectProblem(await get(server, "/api/v1/workflows", null), 401, "unauthorized");
  });

  it("refuses a revoked key at once", async () => {
    const created = await createKey("to-revoke", { dataDir: server.dataDir });
    expect((await get(server, "/api/v1/workflows", created.key)).status).toBe(200);
    await cli(["keys", "revoke", created.id], { dataDir: server.dataDir });
    expectProblem(await get(server, "/api/v1/workflows", created.key), 401, "unauthorized");
    const listed = JSON.parse(await cli(["keys", "list", "--json"], { dataDir: server.dataDir })) as { id: string; revokedAt: string | null }[];
    expect(listed.find((k) => k.id === created.id)?.revokedAt).not.toBeNull();
    expect(JSON.stringify(listed)).not.toContain(created.key);
  });
});

function nest(depth: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < depth; i++) schema = { type: "object", properties: { a: schema } };
  return schema;
}
