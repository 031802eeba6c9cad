import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { createReadStream, statSync } from "node:fs";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, get, post, startGenserve, tempDir, writeConfig, type GenserveServer } from "../helpers/genserve";
import { CALLBACK } from "../helpers/config";
import { waitUntil } from "../helpers/receiver";
import { readSse, streamRequest } from "../helpers/streams";
import { writeTinyModel } from "../helpers/tiny-gguf";

// The real llama.cpp engine on a tiny random-weight model the test writes itself. Random weights
// produce noise; constrained decoding must still make every object follow its schema, on the first
// attempt (the workflow allows no retries).

const EVENT = { type: "event", callback: CALLBACK };

const SCHEMAS: Record<string, Record<string, unknown>> = {
  "types, required and optional properties": {
    type: "object",
    properties: { name: { type: "string", maxLength: 12 }, age: { type: "integer" }, score: { type: "number" }, ok: { type: "boolean" }, nothing: { type: "null" }, note: { type: "string" } },
    required: ["name", "age", "score", "ok", "nothing"],
    additionalProperties: false,
  },
  "additionalProperties as a map": { type: "object", properties: { counts: { type: "object", additionalProperties: { type: "integer", minimum: 0, maximum: 9 }, maxProperties: 3 } }, required: ["counts"] },
  "items, prefixItems, minItems and maxItems": {
    type: "object",
    properties: { list: { type: "array", items: { type: "string", maxLength: 4 }, minItems: 2, maxItems: 3 }, pair: { type: "array", prefixItems: [{ type: "integer" }, { type: "boolean" }], items: false } },
    required: ["list", "pair"],
  },
  "enum and const": { type: "object", properties: { color: { enum: ["red", "green", "blue"] }, version: { const: 2 } }, required: ["color", "version"] },
  "anyOf and oneOf": {
    type: "object",
    properties: { id: { anyOf: [{ type: "integer", minimum: 1, maximum: 99 }, { type: "string", format: "uuid" }] }, shape: { oneOf: [{ type: "boolean" }, { type: "array", items: { type: "integer" }, maxItems: 2 }] } },
    required: ["id", "shape"],
  },
  "allOf merged": { type: "object", allOf: [{ type: "object", properties: { a: { type: "string", minLength: 1, maxLength: 3 } }, required: ["a"] }, { properties: { b: { type: "integer", minimum: -5, maximum: 5 } }, required: ["b"] }] },
  "$ref and recursion": {
    type: "object",
    properties: { tree: { $ref: "#/$defs/node" } },
    required: ["tree"],
    $defs: { node: { type: "object", properties: { v: { type: "integer", minimum: 0, maximum: 9 }, kids: { type: "array", items: { $ref: "#/$defs/node" }, maxItems: 2 } }, required: ["v", "kids"] } },
  },
  "overlapping oneOf kept apart, a pattern with a length": {
    type: "object",
    properties: {
      payment: {
        oneOf: [
          { type: "object", properties: { kind: { const: "card" }, last4: { type: "string", pattern: "^[0-9]{4}$" } } },
          { type: "object", properties: { kind: { const: "bank" }, iban: { type: "string", maxLength: 8 } } },
        ],
      },
      taxId: { type: "object", properties: { ssn: { type: "string", maxLength: 4 }, ein: { type: "string", maxLength: 4 } }, additionalProperties: false, oneOf: [{ required: ["ssn"] }, { required: ["ein"] }] },
      slug: { type: "string", pattern: "^[a-z][a-z0-9-]*$", minLength: 2, maxLength: 6 },
      size: { oneOf: [{ enum: ["s", "m"] }, { enum: ["m", "l"] }] },
    },
    required: ["payment", "taxId", "slug", "size"],
  },
  "lengths, formats and pattern": {
    type: "object",
    properties: {
      code: { type: "string", pattern: "^[A-Z]{2}-[0-9]{3}$" },
      word: { type: "string", minLength: 3, maxLength: 5 },
      day: { type: "string", format: "date" },
      at: { type: "string", format: "time" },
      when: { type: "string", format: "date-time" },
      uuid: { type: "string", format: "uuid" },
      email: { type: "string", format: "email" },
      site: { type: "string", format: "uri" },
    },
    required: ["code", "word", "day", "at", "when", "uuid", "email", "site"],
  },
  "integer and number bounds": {
    type: "object",
    properties: { lat: { type: "number", minimum: -90, maximum: 90 }, pct: { type: "number", minimum: 0, maximum: 1 }, n: { type: "integer", exclusiveMinimum: 10, maximum: 250 } },
    required: ["lat", "pct", "n"],
  },
};

/** How long a test of a run on the `local` workflow may take: its deadline and some. */
const LOCAL_RUN_MS = 420_000;

let server: GenserveServer;
let key: string;
let modelFile: string;

beforeAll(async () => {
  const dir = tempDir();
  modelFile = path.join(dir, "tiny.gguf");
  writeTinyModel(modelFile);
  const config = writeConfig(
    dir,
    `
models:
  tiny:
    provider: llama-cpp
    path: ./tiny.gguf
    parallel: 1
    queue: 1
  narrow:
    provider: llama-cpp
    path: ./tiny.gguf
    contextWindow: 300
    parallel: 1
  gone:
    provider: llama-cpp
    path: ./no-such-model.gguf
workflows:
  narrow:
    model: narrow
    maxOutputTokens: 600
    retries: 0
  local:
    model: tiny
    instructions: Reply with JSON.
    maxOutputTokens: 600
    retries: 0
    # A few seconds on an idle machine; minutes with the suite run twice at once beside other work
    # (CPU-bound decoding: 150 s was once not enough at a load average of 18 on 2 cores).
    timeoutMs: 400000
  local-text:
    model: tiny
    maxOutputTokens: 24
  broken:
    model: gone
  local-hurried:
    model: tiny
    maxOutputTokens: 4000
    retries: 0
    timeoutMs: 400
`,
  );
  server = await startGenserve({ configFile: config, dataDir: path.join(dir, "data") });
  key = server.adminKey!;
}, 120_000);

afterAll(() => server?.stop());

describe("llama-cpp provider on a generated tiny GGUF", () => {
  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);

  for (const [name, schema] of Object.entries(SCHEMAS)) {
    it(`generate/object follows the schema under its grammar: ${name}`, async () => {
      const res = await post(server, "/api/v1/generate/object", { ...EVENT, workflowSlug: "local", input: "Fill in the object.", schema }, key);
      expect(res.status, res.text).toBe(200);
      const validate = ajv.compile(schema);
      expect(validate(res.json.object), JSON.stringify(validate.errors)).toBe(true);
      const { metadata } = res.json;
      expect(metadata.model).toEqual({ name: "genserve-tiny-test", tag: "tiny" });
      expect(metadata.inputTokens).toBeGreaterThan(10);
      expect(metadata.outputTokens).toBeGreaterThan(1);
      expect(metadata.cost).toBe("0");
      const run = await get(server, `/api/v1/runs/${metadata.runId}`, key);
      expect(run.json.decoding).toBe("grammar");
      expect(run.json.attempts).toBe(1);
    }, LOCAL_RUN_MS);
  }

  it("records grammar+validate when part of the schema is left to validation", async () => {
    // uniqueItems over an open item set stays with validation (over a few known values the grammar
    // writes it); one item at most, so every output the grammar allows is valid too.
    const schema = { type: "object", properties: { tags: { type: "array", items: { type: "integer", minimum: 0, maximum: 9 }, maxItems: 1, uniqueItems: true } }, required: ["tags"] };
    const res = await post(server, "/api/v1/generate/object", { ...EVENT, workflowSlug: "local", input: "x", schema }, key);
    expect(res.status, res.text).toBe(200);
    expect((await get(server, `/api/v1/runs/${res.json.metadata.runId}`, key)).json.decoding).toBe("grammar+validate");
  });

  it("generate/text uses the chat template and counts the engine's tokens", async () => {
    const res = await post(server, "/api/v1/generate/text", { ...EVENT, workflowSlug: "local-text", input: "Say something." }, key);
    expect(res.status, res.text).toBe(200);
    expect(typeof res.json.text).toBe("string");
    expect(res.json.metadata.outputTokens).toBeGreaterThan(0);
    expect(res.json.metadata.outputTokens).toBeLessThanOrEqual(25);
    // ChatML around system + user: the prompt is longer than the input alone.
    expect(res.json.metadata.inputTokens).toBeGreaterThan("Say something.".length);
  });

  it("counts the prompt with the model's tokenizer: refuses one that fills the window (413, no run), caps the output at what is left", async () => {
    await waitUntil(async () => (await get(server, "/api/v1/models", key)).json.models.find((m: { alias: string }) => m.alias === "narrow")?.status.state === "ready", "the narrow model to load");
    const big = { type: "object", description: "A long description of what the object holds. ".repeat(12), properties: { a: { type: "string", maxLength: 3 } }, required: ["a"] };
    const refused = await post(server, "/api/v1/generate/object", { ...EVENT, workflowSlug: "narrow", input: "x", schema: big }, key);
    expect(refused.status, refused.text).toBe(413);
    expect(refused.json).toMatchObject({ code: "payload_too_large", detail: expect.stringMatching(/is \d+ tokens; model "narrow" has a \d+-token context window/) });
    expect(refused.json.runId).toBeUndefined();
    expect((await get(server, "/api/v1/runs?workflowSlug=narrow", key)).json.runs).toEqual([]);

    const small = { type: "object", properties: { a: { type: "string", maxLength: 3 } }, required: ["a"] };
    const res = await post(server, "/api/v1/generate/object", { ...EVENT, workflowSlug: "narrow", input: "x", schema: small }, key);
    expect(res.status, res.text).toBe(200);
    const run = (await get(server, `/api/v1/runs/${res.json.metadata.runId}`, key)).json;
    const window = Number(/(\d+)-token/.exec(refused.json.detail)![1]);
    expect(run.promptTokens).toBeGreaterThan(20);
    expect(run.outputTokenLimit).toBe(window - run.promptTokens);
    expect(run.outputTokenLimit).toBeLessThan(600);
    // The count is the prompt as the sequence holds it; node-llama-cpp's token meter books the last
    // prompt token with the first decoding step, so its input count is one lower.
    expect(res.json.metadata.inputTokens).toBe(run.promptTokens - 1);
  });

  it("refuses a schema no value satisfies with 400 before any run exists, streamed or not", async () => {
    const impossible = { type: "object", properties: { a: false }, required: ["a"] };
    const before = (await get(server, "/api/v1/runs?workflowSlug=local", key)).json.runs.length;
    const res = await post(server, "/api/v1/generate/object", { ...EVENT, workflowSlug: "local", input: "x", schema: impossible }, key);
    expect(res.status, res.text).toBe(400);
    expect(res.json).toMatchObject({ code: "validation_failed", errors: [{ path: "/schema", message: "admits no value" }] });
    expect(res.json.runId).toBeUndefined();
    const streamed = await post(server, "/api/v1/stream/object", { workflowSlug: "local", input: "x", schema: impossible }, key);
    expect(streamed.status).toBe(400);
    expect((await get(server, "/api/v1/runs?workflowSlug=local", key)).json.runs.length).toBe(before);
  });

  it("stream/object streams deltas token by token and ends with a valid object", async () => {
    const schema = SCHEMAS["lengths, formats and pattern"]!;
    const response = await streamRequest(server.url, key, { workflowSlug: "local", input: "go", schema });
    expect(response.status).toBe(200);
    const { events } = await readSse(response);
    const items = events.filter((e) => e.event === undefined || e.event === "message");
    const done = events.find((e) => e.event === "done");
    expect(items.length).toBeGreaterThan(5);
    expect(done, JSON.stringify(events.slice(-2))).toBeDefined();
    const object = JSON.parse(done!.data).object;
    expect(ajv.compile(schema)(object)).toBe(true);
  }, LOCAL_RUN_MS);

  it("queues beyond `parallel`, answers 429 when the queue is full, and frees the sequence on disconnect", async () => {
    // A string of at least 300 characters keeps the only sequence busy for seconds.
    const body = { workflowSlug: "local", input: "long", schema: { type: "object", properties: { s: { type: "string", minLength: 300 } }, required: ["s"] } };
    const first = new AbortController();
    const response = await fetch(`${server.url}/api/v1/stream/object?cancelOnDisconnect=true`, {
      method: "POST",
      headers: { "content-type": "application/json", "api-key": key },
      body: JSON.stringify(body),
      signal: first.signal,
    });
    const runId = response.headers.get("x-run-id")!;
    const reader = response.body!.getReader();
    await reader.read(); // generation has started
    // parallel 1, queue 1: this one waits…
    const waiting = post(server, "/api/v1/generate/text", { ...EVENT, workflowSlug: "local-text", input: "after" }, key);
    await new Promise((r) => setTimeout(r, 200));
    // …and this one is refused.
    const refused = await post(server, "/api/v1/generate/text", { ...EVENT, workflowSlug: "local-text", input: "too many" }, key);
    expect(refused.status, refused.text).toBe(429);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    expect(refused.json.code).toBe("model_busy");
    // Disconnecting stops the stream's generation; the waiting run then gets the sequence.
    first.abort();
    const after = await waiting;
    expect(after.status, after.text).toBe(200);
    const cancelled = await get(server, `/api/v1/runs/${runId}`, key);
    expect(cancelled.json.status).toBe("cancelled");
    expect(cancelled.json.error.code).toBe("cancelled");
    expect(cancelled.json.output).toBeNull();
  });

  it("a run past its workflow's time-out stops decoding and frees the lane (504)", async () => {
    const schema = { type: "object", properties: { s: { type: "string", minLength: 3900 } }, required: ["s"] };
    const started = Date.now();
    const res = await post(server, "/api/v1/generate/object", { ...EVENT, workflowSlug: "local-hurried", input: "long", schema }, key);
    expect(res.status, res.text).toBe(504);
    expect(res.json.code).toBe("model_timeout");
    // 3,900 tokens take half a minute here; the run ended near its 400 ms deadline instead.
    expect(Date.now() - started).toBeLessThan(10_000);
    // parallel 1: the next run gets the lane at once.
    const next = await post(server, "/api/v1/generate/text", { ...EVENT, workflowSlug: "local-text", input: "next" }, key);
    expect(next.status, next.text).toBe(200);
  });

  it("a model whose file is missing: the server runs, the model says why, runs answer 503", async () => {
    const models = await get(server, "/api/v1/models", key);
    const gone = models.json.models.find((m: { alias: string }) => m.alias === "gone");
    expect(gone.status.state).toBe("unavailable");
    expect(gone.status.detail).toContain("no-such-model.gguf");
    expect(models.json.models.find((m: { alias: string }) => m.alias === "tiny").status).toMatchObject({ state: "ready", name: "genserve-tiny-test" });
    const res = await post(server, "/api/v1/generate/text", { ...EVENT, workflowSlug: "broken", input: "x" }, key);
    expect(res.status).toBe(503);
    expect(res.json.code).toBe("model_unavailable");
    expect(res.json.detail).toContain("no-such-model.gguf");
    expect(res.json.detail).toContain("--model");
    expect(server.output()).toContain('Model "gone" is not available');
    // Refused while planned: no run is stored for it (issue 32, part 5).
    const runs = await get(server, "/api/v1/runs?workflowSlug=broken", key);
    expect(runs.json.runs).toEqual([]);
  });
});

describe("embedded defaults", () => {
  it("with no configuration file: a `default` workflow on the local model given by --model", async () => {
    const dir = tempDir();
    const srv = await startGenserve({ dataDir: path.join(dir, "data"), cwd: dir, env: { GENSERVE_MODEL: modelFile } });
    try {
      const workflows = await get(srv, "/api/v1/workflows", srv.adminKey!);
      expect(workflows.json.workflows.map((w: { slug: string; model: string }) => [w.slug, w.model])).toEqual([["default", "local"]]);
      const res = await post(srv, "/api/v1/generate/object", { ...EVENT, workflowSlug: "default", input: "x", schema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] } }, srv.adminKey!);
      expect(res.status, res.text).toBe(200);
      expect(typeof res.json.object.ok).toBe("boolean");
    } finally {
      await srv.stop();
    }
  }, 120_000);

  it("with no file and no reachable download: starts, names the problem and the fix, runs answer 503", async () => {
    const dir = tempDir();
    // A URL nothing listens on stands in for "no network" without depending on the machine's.
    const nowhere = `http://127.0.0.1:${await closedPort()}/model.gguf`;
    const srv = await startGenserve({ dataDir: path.join(dir, "data"), cwd: dir, env: { GENSERVE_MODEL: nowhere } });
    try {
      expect(srv.output()).toContain(nowhere);
      expect(srv.output()).toContain("Give a local file instead");
      const res = await post(srv, "/api/v1/generate/text", { ...EVENT, workflowSlug: "default", input: "x" }, srv.adminKey!);
      expect(res.status).toBe(503);
      expect(res.json.code).toBe("model_unavailable");
      expect(res.json.detail).toContain(`could not be downloaded from ${nowhere}`);
      const models = await get(srv, "/api/v1/models", srv.adminKey!);
      expect(models.json.models[0].status).toMatchObject({ state: "unavailable", fix: expect.stringContaining("--model") });
    } finally {
      await srv.stop();
    }
  }, 120_000);

  it("downloads a model URL once into <data>/models and finds it again with the host gone", async () => {
    const dir = tempDir();
    const host = http.createServer((req, res) => {
      const size = statSync(modelFile).size;
      res.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": size, "Accept-Ranges": "none" });
      if (req.method === "HEAD") return res.end();
      createReadStream(modelFile).pipe(res);
    });
    await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(host.address() as AddressInfo).port}/tiny.gguf`;
    const dataDir = path.join(dir, "data");
    try {
      const first = await startGenserve({ dataDir, cwd: dir, env: { GENSERVE_MODEL: url } });
      await first.stop();
      expect(first.output()).toContain("local model file ready");
      expect(statSync(path.join(dataDir, "models", "tiny.gguf")).size).toBe(statSync(modelFile).size);
    } finally {
      await new Promise((resolve) => host.close(resolve));
    }
    const again = await startGenserve({ dataDir, cwd: dir, env: { GENSERVE_MODEL: url } });
    try {
      const keyLine = await createKey("again", { dataDir });
      const res = await post(again, "/api/v1/generate/text", { ...EVENT, workflowSlug: "default", input: "x" }, keyLine.key);
      expect(res.status, res.text).toBe(200);
    } finally {
      await again.stop();
    }
  }, 180_000);
});

/** A loopback port that was free a moment ago: connecting to it is refused. */
async function closedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
