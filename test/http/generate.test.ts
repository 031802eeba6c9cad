import Ajv2020 from "ajv/dist/2020";
import { beforeAll, describe, expect, it } from "vitest";
import { CALLBACK, INVOICE_SCHEMA, MANUAL_TOPICS } from "../helpers/config";
import type { FakeUpstream } from "../helpers/fake-upstream";
import { useGenserve } from "../helpers/suite";
import { get, post, type GenserveServer } from "../helpers/genserve";

const ctx = useGenserve();
let upstream: FakeUpstream;
let server: GenserveServer;
let key: string;
beforeAll(() => void ({ upstream, server, key } = ctx));

const invoice = { number: "INV-7", total: 120.5, currency: "EUR", lines: [{ description: "Chair", amount: 120.5 }] };
const objectBody = (extra: Record<string, unknown> = {}) => ({
  input: "Invoice INV-7, one chair, 120.50 EUR",
  type: "event",
  callback: CALLBACK,
  workflowSlug: "extract-invoice",
  schema: INVOICE_SCHEMA,
  ...extra,
});

describe("POST /api/v1/generate/object", () => {
  it("returns a validated object with metadata computed from what the upstream reported", async () => {
    upstream.reply({ content: JSON.stringify(invoice), usage: { prompt_tokens: 100, completion_tokens: 50 }, model: "fake-7b-2026-01" });
    const res = await post(server, "/api/v1/generate/object", objectBody(), key);
    expect(res.status).toBe(200);
    expect(res.json.object).toEqual(invoice);
    expect(new Ajv2020().validate(INVOICE_SCHEMA, res.json.object)).toBe(true);
    const runId = res.headers.get("x-run-id");
    expect(runId).toMatch(/^run_[0-9A-Z]{26}$/);
    expect(res.json.metadata).toEqual({
      runId,
      cost: "0.000045", // 100 × 0.15 + 50 × 0.60 per million
      model: { name: "fake-7b-2026-01", tag: "fast" },
      durationInMs: expect.any(Number),
      inputTokens: 100,
      outputTokens: 50,
    });

    // What the model received: native structured output, instructions and the workflow's context.
    const sent = upstream.requests[0]!.body;
    expect(sent.model).toBe("fake-7b");
    expect(sent.response_format?.type).toBe("json_schema");
    expect(sent.response_format?.json_schema?.schema).toMatchObject({ type: "object", required: ["number", "total", "currency"] });
    expect(sent.temperature).toBe(0);
    expect(sent.max_tokens).toBe(1024);
    const system = sent.messages.find((m) => m.role === "system")!.content as string;
    expect(system).toContain("You extract invoice fields");
    expect(system).toContain("Amounts are in EUR unless stated.");
    expect(sent.messages.at(-1)).toEqual({ role: "user", content: "Invoice INV-7, one chair, 120.50 EUR" });
    expect(upstream.requests[0]!.headers.authorization).toBe("Bearer sk-test");

    // The run is stored with everything the response said.
    const stored = await get(server, `/api/v1/runs/${runId}`, key);
    expect(stored.json).toMatchObject({ id: runId, status: "succeeded", output: invoice, operation: "generate.object", callback: CALLBACK, attempts: 1 });
    expect(stored.json.metadata).toEqual(res.json.metadata);
  });

  it("retries an invalid output with the validation errors fed back, and bills every attempt", async () => {
    upstream.reply(
      { content: JSON.stringify({ number: "INV-7", total: -3, currency: "GBP" }), usage: { prompt_tokens: 10, completion_tokens: 5 } },
      { content: "not json at all", usage: { prompt_tokens: 20, completion_tokens: 6 } },
      { content: JSON.stringify(invoice), usage: { prompt_tokens: 30, completion_tokens: 7 } },
    );
    const res = await post(server, "/api/v1/generate/object", objectBody(), key);
    expect(res.status).toBe(200);
    expect(res.json.object).toEqual(invoice);
    expect(res.json.metadata).toMatchObject({ inputTokens: 60, outputTokens: 18 });
    expect(upstream.requests).toHaveLength(3);
    const feedback = upstream.requests[1]!.body.messages.at(-1)!.content as string;
    expect(feedback).toContain("/total: must be >= 0");
    expect(feedback).toContain("/currency: must be one of");
    expect(upstream.requests[1]!.body.messages.at(-2)).toMatchObject({ role: "assistant" });
    expect(upstream.requests[2]!.body.messages.at(-1)!.content).toContain("not valid JSON");
  });

  it("fails with 502 output_invalid after the retry budget, never returning an invalid object", async () => {
    upstream.reply({ content: '{"number": 7}' }, { content: '{"number": 8}' }, { content: '{"number": 9}' });
    const res = await post(server, "/api/v1/generate/object", objectBody(), key);
    expect(res.status).toBe(502);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.json).toMatchObject({ code: "output_invalid", status: 502, runId: expect.stringMatching(/^run_/) });
    expect(res.json.errors).toContainEqual({ path: "/number", message: "must be string" });
    // What the model last returned, which the errors describe.
    expect(res.json.lastOutput).toBe('{"number": 9}');
    expect(res.json.object).toBeUndefined();
    expect(upstream.requests).toHaveLength(3);
    const stored = await get(server, `/api/v1/runs/${res.json.runId}`, key);
    expect(stored.json).toMatchObject({ status: "failed", output: null, attempts: 3, error: { code: "output_invalid", lastOutput: '{"number": 9}' } });
    expect(stored.json.metadata.inputTokens).toBe(33); // 3 attempts × 11 (the fake's default usage)
  });

  it("accepts top-level arrays and string enums, $defs/$ref and anyOf", async () => {
    const listSchema = { type: "array", items: { anyOf: [{ type: "string" }, { type: "integer" }] }, minItems: 2 };
    upstream.reply({ content: '["a", 2]' });
    const list = await post(server, "/api/v1/generate/object", objectBody({ schema: listSchema }), key);
    expect(list.status).toBe(200);
    expect(list.json.object).toEqual(["a", 2]);

    const sentiment = { type: "string", enum: ["positive", "negative", "neutral"] };
    upstream.reply({ content: '"neutral"' });
    const enumRes = await post(server, "/api/v1/generate/object", objectBody({ schema: sentiment }), key);
    expect(enumRes.status).toBe(200);
    expect(enumRes.json.object).toBe("neutral");
  });

  it("adds request contexts after the workflow's, without duplicates, and text attachments", async () => {
    upstream.reply({ content: JSON.stringify(invoice) });
    const csv = Buffer.from("item,amount\nChair,120.50\n").toString("base64");
    const md = `data:text/markdown;base64,${Buffer.from("# Note\nPaid in full.").toString("base64")}`;
    const res = await post(
      server,
      "/api/v1/generate/object",
      objectBody({ contextSlugs: ["tone", "invoice-rules"], attachments: [{ file: csv, mimeType: "text/csv" }, { file: md }] }),
      key,
    );
    expect(res.status).toBe(200);
    const system = upstream.requests[0]!.body.messages.find((m) => m.role === "system")!.content as string;
    expect(system.indexOf('slug="invoice-rules"')).toBeLessThan(system.indexOf('slug="tone"'));
    expect(system.match(/slug="invoice-rules"/g)).toHaveLength(1);
    expect(system).toContain('<attachment index="0" type="text/csv">\nitem,amount\nChair,120.50\n');
    expect(system).toContain('<attachment index="1" type="text/markdown">\n# Note\nPaid in full.');
    const stored = await get(server, `/api/v1/runs/${res.json.metadata.runId}`, key);
    expect(stored.json.contextSlugs).toEqual(["invoice-rules", "tone"]);
    expect(stored.json.attachments[0]).toMatchObject({ index: 0, source: "inline", mimeType: "text/csv", bytes: 25, textChars: 25 });
    expect(stored.json.attachments[0].sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it("answers 502 model_error when the upstream fails, and records the failed run", async () => {
    upstream.reply({ status: 400 });
    const res = await post(server, "/api/v1/generate/object", objectBody(), key);
    expect(res.status).toBe(502);
    expect(res.json).toMatchObject({ code: "model_error", runId: expect.stringMatching(/^run_/) });
    expect(res.text).not.toContain("sk-test");
    const stored = await get(server, `/api/v1/runs/${res.json.runId}`, key);
    expect(stored.json).toMatchObject({ status: "failed", error: { code: "model_error" } });
  });

  it("answers 504 model_timeout when the model exceeds the workflow's time-out", async () => {
    upstream.reply({ delayMs: 3_000, content: '{"a":1}' });
    const started = Date.now();
    const res = await post(server, "/api/v1/generate/object", objectBody({ workflowSlug: "slow", schema: { type: "object" } }), key);
    expect(res.status).toBe(504);
    expect(res.json.code).toBe("model_timeout");
    expect(Date.now() - started).toBeLessThan(2_900);
  });
});

describe("large contexts", () => {
  it("keep only the chunks most relevant to the input, recorded on the run", async () => {
    upstream.reply({ content: "Descale it monthly." });
    const res = await post(server, "/api/v1/generate/text", { input: "How do I clean the blender20?", type: "event", callback: CALLBACK, workflowSlug: "support" }, key);
    expect(res.status).toBe(200);
    const system = upstream.requests[0]!.body.messages.find((m) => m.role === "system")!.content as string;
    expect(system).toContain("Topic 20: the blender20 section.");
    expect(system).not.toContain("Topic 7: the toaster7 section.");
    expect(system.length).toBeLessThan(MANUAL_TOPICS.join("\n\n").length / 2);
    const run = await get(server, `/api/v1/runs/${res.json.metadata.runId}`, key);
    // 30 topics of ~290 characters in 2000-character chunks: about 5 chunks, of which some fit.
    expect(run.json.contextChunks.length).toBeGreaterThanOrEqual(1);
    expect(run.json.contextChunks.length).toBeLessThan(5);
    expect(run.json.contextChunks.every((id: string) => /^manual#\d+$/.test(id))).toBe(true);
  });
});

describe("POST /api/v1/generate/text", () => {
  it("returns text and metadata; price-less models cost 0", async () => {
    upstream.reply({ content: "Hello there.", usage: { prompt_tokens: 3, completion_tokens: 2 } });
    const res = await post(server, "/api/v1/generate/text", { input: "Say hello", type: "event", callback: CALLBACK, workflowSlug: "no-retry" }, key);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      text: "Hello there.",
      metadata: { runId: res.headers.get("x-run-id"), cost: "0", model: { name: "fake-free-served", tag: "free" }, durationInMs: expect.any(Number), inputTokens: 3, outputTokens: 2 },
    });
    expect(upstream.requests[0]!.body.response_format).toBeUndefined();
  });

  it("refuses a schema field: generate/text has none", async () => {
    const res = await post(server, "/api/v1/generate/text", { input: "x", type: "event", callback: CALLBACK, workflowSlug: "no-retry", schema: { type: "object" } }, key);
    expect(res.status).toBe(400);
    expect(res.json.errors).toEqual([{ path: "/schema", message: "is not a known field" }]);
  });
});
