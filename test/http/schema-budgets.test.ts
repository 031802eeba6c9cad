import path from "node:path";
import { performance } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CALLBACK } from "../helpers/config";
import { startFakeUpstream, type FakeUpstream } from "../helpers/fake-upstream";
import { get, post, startGenserve, tempDir, writeConfig, type GenserveServer } from "../helpers/genserve";
import { largeSchema } from "../helpers/large-schema";
import { writeTinyModel } from "../helpers/tiny-gguf";

// Large and pathological schemas: accepted by what they cost, not by their size; prepared off the
// event loop within time budgets, with the fallback said on the run.

const EVENT = { type: "event", callback: CALLBACK };
const GRAMMAR_BUDGET_MS = 300;

let upstream: FakeUpstream;
let server: GenserveServer;
let key: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  const dir = tempDir();
  // A window large enough for a schema of some kilobytes in the prompt (the tiny model reads bytes).
  writeTinyModel(path.join(dir, "tiny.gguf"), { contextLength: 16384 });
  const config = writeConfig(
    dir,
    `
limits:
  grammarCompileTimeoutMs: ${GRAMMAR_BUDGET_MS}
models:
  tiny:
    provider: llama-cpp
    path: ./tiny.gguf
    contextWindow: 16384
    parallel: 1
    queue: 4
  remote:
    provider: openai-compatible
    baseURL: ${upstream.url}
    model: fake-structured
    structuredOutputs: true
  oai:
    provider: openai
    baseURL: ${upstream.url}
    model: gpt-test
    apiKey: sk-test
  plain:
    provider: openai-compatible
    baseURL: ${upstream.url}
    model: fake-plain
    structuredOutputs: false
workflows:
  local:
    model: tiny
    instructions: Reply with JSON.
    maxOutputTokens: 40
    retries: 0
  remote:
    model: remote
    retries: 0
  oai:
    model: oai
  plain:
    model: plain
`,
  );
  server = await startGenserve({ configFile: config, dataDir: path.join(dir, "data") });
  key = server.adminKey!;
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await upstream?.close();
});

/**
 * A small schema whose grammar takes the compiler over a second (recursive references joined under
 * `allOf` multiply its visits, each merging a wide object) before it gives up on its own bound.
 */
function pathologicalSchema(): Record<string, unknown> {
  const chain = (n: string, m: number) => ({
    [`${n}0`]: { additionalProperties: { allOf: [{ $ref: `#/definitions/${n}1` }, { multipleOf: m }] }, required: [`${n}0`] },
    [`${n}1`]: { additionalProperties: { $ref: `#/definitions/${n}0` }, required: ["a", `${n}1`] },
  });
  const wide = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`f${i}`, { type: "string", maxLength: 10 }]));
  return {
    type: "object",
    allOf: [{ $ref: "#/definitions/node" }, { $ref: "#/definitions/p0" }, { $ref: "#/definitions/q0" }, { $ref: "#/definitions/r0" }],
    definitions: {
      node: { type: "object", properties: { a: { $ref: "#/definitions/node" }, b: { type: "integer" }, ...wide }, required: ["b"] },
      ...chain("p", 2),
      ...chain("q", 3),
      ...chain("r", 5),
    },
  };
}

/** Polls /healthz every 20 ms until stopped; returns each answer's latency in ms. */
function pollHealth(): { stop(): Promise<number[]> } {
  const latencies: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const res = await fetch(`${server.url}/healthz`);
      await res.arrayBuffer();
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return latencies;
    },
  };
}

const runIdOf = (res: Awaited<ReturnType<typeof post>>): string => res.json.metadata?.runId ?? res.json.runId;

describe("schema preparation within budgets", () => {
  it("a schema whose grammar would take seconds falls back within the budget, off the event loop; /healthz and another run go on meanwhile", async () => {
    // Both grammar workers up (and the model loaded), as on a server that has served a while.
    const warm = await Promise.all(
      ["a", "b"].map((name) => post(server, "/api/v1/generate/object", { ...EVENT, workflowSlug: "local", input: "x", schema: { type: "object", properties: { [name]: { type: "boolean" } }, required: [name] } }, key)),
    );
    for (const res of warm) expect(res.status, res.text).toBe(200);

    const health = pollHealth();
    const finished: string[] = [];
    const slow = post(server, "/api/v1/generate/object", { ...EVENT, workflowSlug: "local", input: "Fill it in.", schema: pathologicalSchema() }, key).then((res) => {
      finished.push("slow");
      return res;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const simpleSchema = { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] };
    const quick = post(server, "/api/v1/generate/object", { ...EVENT, workflowSlug: "local", input: "x", schema: simpleSchema }, key).then((res) => {
      finished.push("quick");
      return res;
    });
    const [slowRes, quickRes] = await Promise.all([slow, quick]);
    const latencies = await health.stop();

    // The other run did not wait for the slow schema's compile: it took the one lane first.
    expect(quickRes.status, quickRes.text).toBe(200);
    expect(finished).toEqual(["quick", "slow"]);
    expect((await get(server, `/api/v1/runs/${quickRes.json.metadata.runId}`, key)).json.decoding).toBe("grammar");
    // The event loop stayed free: the compile ran in a worker and was stopped at its budget. On the
    // loop it could not be stopped and would hold it for seconds; the bound leaves room for a busy
    // machine's scheduling (gaps of several hundred ms with the suite run twice at once).
    expect(latencies.length).toBeGreaterThan(5);
    expect(Math.max(...latencies), latencies.map((l) => l.toFixed(0)).join(" ")).toBeLessThan(2_000);

    // Random weights under a grammar of any JSON rarely satisfy the schema: succeeded or output_invalid,
    // either way the run says how it was held to the schema and why.
    expect([200, 502], slowRes.text).toContain(slowRes.status);
    const run = (await get(server, `/api/v1/runs/${runIdOf(slowRes)}`, key)).json;
    expect(run.decoding).toBe("grammar+validate");
    expect(run.metadata.warnings).toEqual([
      `The schema's grammar was not built (grammar compile time (over ${GRAMMAR_BUDGET_MS} ms, limits.grammarCompileTimeoutMs)): the output was sampled as any JSON value and held to the schema by validation.`,
    ]);
    expect(server.output()).toContain("a schema's grammar was not built");
  }, 60_000);

  it("accepts a 1 MiB schema shaped like Kubernetes', compiles its validator off the event loop, and validates the output", async () => {
    // Just under the default limits.schemaBytes (1 MiB); the definitions overshoot the target by one.
    const schema = largeSchema(1024 * 1024 - 4096);
    expect(JSON.stringify(schema).length).toBeGreaterThan(1024 * 1024 - 4096);
    expect(JSON.stringify(schema).length).toBeLessThanOrEqual(1024 * 1024);
    // The spec refers to the last definition, whose kind is not "Kind0": validated against the whole schema.
    upstream.reply({ content: JSON.stringify({ apiVersion: "apps/v1", kind: "Deployment", spec: { kind: "Kind0" } }) });
    const health = pollHealth();
    const started = performance.now();
    const invalid = await post(server, "/api/v1/generate/object", { ...EVENT, workflowSlug: "remote", input: "Describe a deployment.", schema }, key);
    const took = performance.now() - started;
    const latencies = await health.stop();
    expect(invalid.status, invalid.text.slice(0, 500)).toBe(502);
    expect(invalid.json).toMatchObject({ code: "output_invalid", errors: [{ path: "/spec/kind", message: expect.stringMatching(/^must be one of/) }] });
    expect(upstream.requests.at(-1)!.body.response_format?.json_schema?.schema).toBeDefined();
    // Compiled off the event loop: no gap in /healthz's answers holds a large part of the request,
    // as a compile on the loop would (relative, so that a busy machine slowing both does not matter).
    expect(Math.max(...latencies), `${latencies.map((l) => l.toFixed(0)).join(" ")} during ${took.toFixed(0)} ms`).toBeLessThan(Math.max(250, took / 2));

    upstream.reply({ content: JSON.stringify({ apiVersion: "apps/v1", kind: "Deployment" }) });
    const res = await post(server, "/api/v1/generate/object", { ...EVENT, workflowSlug: "remote", input: "Describe a deployment.", schema }, key);
    expect(res.status, res.text.slice(0, 500)).toBe(200);
    expect(res.json.object).toEqual({ apiVersion: "apps/v1", kind: "Deployment" });
  }, 60_000);

  it("records a warning on the run for a tolerated draft mix instead of refusing it", async () => {
    const schema = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      id: "https://example.com/order.json",
      type: "object",
      properties: { n: { $ref: "#/definitions/count" } },
      required: ["n"],
      definitions: { count: { type: "integer" } },
    };
    const res = await post(server, "/api/v1/generate/object", { ...EVENT, workflowSlug: "remote", input: "x", schema }, key);
    expect(res.status, res.text).toBe(200);
    const warnings = [
      'The schema is 2020-12 but uses draft-04\'s "id" (at /schema/id); it was ignored as an unknown keyword. Use "$id" to name a schema.',
      'The schema is 2020-12 but keeps subschemas in "definitions" (at /schema/definitions), the name before 2019-09; they were used as "$defs".',
    ];
    expect(res.json.metadata.warnings).toEqual(warnings);
    expect((await get(server, `/api/v1/runs/${res.json.metadata.runId}`, key)).json.metadata.warnings).toEqual(warnings);
    // Nothing to say: no warnings field at all.
    const plain = await post(server, "/api/v1/generate/object", { ...EVENT, workflowSlug: "remote", input: "x", schema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } }, key);
    expect(plain.status, plain.text).toBe(200);
    expect(plain.json.metadata).not.toHaveProperty("warnings");
  });

  it("says before any run what a workflow's model makes of a schema: exact grammar, checked after, strict mode, refused, warnings", async () => {
    upstream.reset();
    const check = async (body: Record<string, unknown>) => {
      const res = await post(server, "/api/v1/schemas/check", body, key);
      expect(res.status, res.text).toBe(200);
      return res.json;
    };
    const exact = { type: "object", properties: { ok: { type: "boolean" }, n: { type: "number", minimum: 0.5, maximum: 2 } }, required: ["ok", "n"], additionalProperties: false };
    expect(await check({ schema: exact, workflowSlug: "local" })).toEqual({
      accepted: true,
      problems: [],
      warnings: [],
      model: { alias: "tiny", provider: "llama-cpp" },
      support: { mode: "grammar", exact: true, notes: [] },
    });
    const unique = { type: "object", properties: { tags: { type: "array", items: { type: "string" }, uniqueItems: true } }, required: ["tags"] };
    expect((await check({ schema: unique, workflowSlug: "local" })).support).toEqual({ mode: "grammar", exact: false, notes: ["uniqueItems at /properties/tags"] });
    // A provider: strict mode on OpenAI when the schema fits, and what keeps it off when not.
    expect((await check({ schema: exact, workflowSlug: "oai" })).support).toEqual({ mode: "provider", exact: false, strict: true, notes: [] });
    expect((await check({ schema: unique, workflowSlug: "oai" })).support).toEqual({ mode: "provider", exact: false, strict: false, notes: ["additionalProperties is not false at /"] });
    expect((await check({ schema: exact, workflowSlug: "remote" })).support).toEqual({ mode: "provider", exact: false, notes: [] });
    expect((await check({ schema: exact, workflowSlug: "plain" })).support).toEqual({ mode: "prompt", exact: false, notes: [] });
    // What a run would refuse, named; a schema no value satisfies is found by the local model's compiler.
    const refused = await check({ schema: { type: "number" }, workflowSlug: "local" });
    expect(refused).toMatchObject({ accepted: false, support: null, problems: [{ path: "/schema/type", message: expect.stringContaining('must be "object"') }] });
    const impossible = await check({ schema: { type: "object", properties: { a: false }, required: ["a"] }, workflowSlug: "local" });
    expect(impossible).toMatchObject({ accepted: false, problems: [{ path: "/schema", message: "admits no value" }] });
    // Tolerated draft mixes, and no workflow at all.
    const mixed = await check({ schema: { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", id: "x" } });
    expect(mixed).toMatchObject({ accepted: true, model: null, support: null, warnings: [expect.stringContaining('draft-04\'s "id"')] });
    // Nothing was run.
    expect(upstream.requests).toHaveLength(0);
    const unknown = await post(server, "/api/v1/schemas/check", { schema: exact, workflowSlug: "nope" }, key);
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ code: "workflow_not_found", errors: [{ path: "/workflowSlug" }] });
  });
});
