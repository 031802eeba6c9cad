import { describe, expect, it } from "vitest";
import { CALLBACK } from "../helpers/config";
import { get, post } from "../helpers/genserve";
import { DOCX_TYPE, docxBody, makeDocx, makePdfPages } from "../helpers/documents";
import { waitUntil } from "../helpers/receiver";
import { readSse, streamRequest } from "../helpers/streams";
import { useGenserve } from "../helpers/suite";

// A small work budget, so that the very large document below surely runs out of it.
const ctx = useGenserve(`
limits:
  groundingWork: 300000
`);

const SCHEMA = {
  type: "object",
  properties: { number: { type: "string" }, total: { type: "number" }, due: { type: "string", format: "date" }, note: { type: "string" } },
  required: ["number", "total"],
};
const OBJECT = { number: "INV-7", total: 1234.5, due: "2026-03-03", note: "Not in the document" };
const b64 = (text: string) => Buffer.from(text).toString("base64");

const object = (body: Record<string, unknown>) =>
  post(ctx.server, "/api/v1/generate/object", { input: "Extract the invoice.", type: "event", callback: CALLBACK, workflowSlug: "no-retry", schema: SCHEMA, grounding: true, ...body }, ctx.key);

describe("grounding: true", () => {
  it.each([
    ["text/plain", () => b64("Invoice INV-7\nTotal: 1.234,50 EUR\nDue 3 March 2026"), undefined],
    ["text/html", () => b64("<html><body><h1>Invoice INV-7</h1><p>Total: <b>1.234,50</b> EUR</p><p>Due 3 March 2026</p></body></html>"), undefined],
    ["application/pdf", () => makePdfPages([["Invoice INV-7", "Total: 1.234,50 EUR"], ["Due 3 March 2026"]]).toString("base64"), [1, 1, 2]],
    [DOCX_TYPE, async () => (await makeDocx(docxBody("<w:p><w:r><w:t>Invoice INV-7</w:t></w:r></w:p><w:p><w:r><w:t>Total: 1.234,50 EUR, due 3 March 2026</w:t></w:r></w:p>"))).toString("base64"), undefined],
  ])("finds the values of an object in a %s attachment", async (mimeType, file, page) => {
    ctx.upstream.reply({ content: JSON.stringify(OBJECT) });
    const res = await object({ attachments: [{ file: await file(), mimeType }] });
    expect(res.status).toBe(200);
    const at = (i: number) => ({ source: { attachment: 0 }, ...(page !== undefined && { page: page[i] }) });
    expect(res.json.grounding).toEqual([
      { pointer: "/number", match: "exact", ...at(0), start: expect.any(Number), end: expect.any(Number), text: "INV-7" },
      { pointer: "/total", match: "normalized", ...at(1), start: expect.any(Number), end: expect.any(Number), text: "1.234,50" },
      { pointer: "/due", match: "normalized", ...at(2), start: expect.any(Number), end: expect.any(Number), text: "3 March 2026" },
      { pointer: "/note", match: "none", reason: "not_found" },
    ]);
    expect(res.json.metadata.grounding).toEqual({ grounded: 3, total: 4 });

    // Stored on the run, with the same summary.
    const run = await get(ctx.server, `/api/v1/runs/${res.json.metadata.runId}`, ctx.key);
    expect(run.json.grounding).toEqual(res.json.grounding);
    expect(run.json.metadata.grounding).toEqual({ grounded: 3, total: 4 });
  });

  it("finds values in the input, with offsets into it", async () => {
    const input = "Invoice INV-7 for 1,234.50 due Mar 3, 2026.";
    ctx.upstream.reply({ content: JSON.stringify(OBJECT) });
    const res = await object({ input });
    expect(res.json.grounding.slice(0, 3)).toEqual([
      { pointer: "/number", match: "exact", source: "input", start: 8, end: 13, text: "INV-7" },
      { pointer: "/total", match: "normalized", source: "input", start: 18, end: 26, text: "1,234.50" },
      { pointer: "/due", match: "normalized", source: "input", start: 31, end: 42, text: "Mar 3, 2026" },
    ]);
  });

  it("is in the stream's final event, and absent when not asked for", async () => {
    ctx.upstream.reply({ content: JSON.stringify(OBJECT) });
    const streamed = await streamRequest(ctx.server.url, ctx.key, { input: "Invoice INV-7, total 1234.5", workflowSlug: "no-retry", schema: SCHEMA, grounding: true });
    const { events } = await readSse(streamed);
    const done = JSON.parse(events.find((e) => e.event === "done")!.data);
    expect(done.grounding.map((l: { pointer: string; match: string }) => [l.pointer, l.match])).toEqual([
      ["/number", "exact"],
      ["/total", "exact"],
      ["/due", "none"],
      ["/note", "none"],
    ]);
    expect(done.metadata.grounding).toEqual({ grounded: 2, total: 4 });
    const run = await get(ctx.server, `/api/v1/runs/${done.runId}`, ctx.key);
    expect(run.json.grounding).toEqual(done.grounding);

    ctx.upstream.reply({ content: JSON.stringify(OBJECT) });
    const plain = await object({ grounding: undefined });
    expect(plain.json.grounding).toBeUndefined();
    expect(plain.json.metadata.grounding).toBeUndefined();
    expect((await get(ctx.server, `/api/v1/runs/${plain.json.metadata.runId}`, ctx.key)).json.grounding).toBeNull();
  });

  it("is refused on text runs", async () => {
    const res = await post(ctx.server, "/api/v1/generate/text", { input: "Hi", type: "event", callback: CALLBACK, workflowSlug: "no-retry", grounding: true }, ctx.key);
    expect(res.status).toBe(400);
    expect(res.json.errors).toEqual([{ path: "/grounding", message: expect.stringMatching(/only for object runs/) }]);
  });
});

describe("x-grounded", () => {
  const schema = { type: "object", properties: { number: { type: "string" }, total: { type: "number", "x-grounded": true } }, required: ["number", "total"] };
  const request = { input: "Invoice INV-7, total 120.50 EUR", type: "event", callback: CALLBACK, workflowSlug: "extract-invoice", schema };

  it("retries a value not in the sources with the reason fed back, and fails naming it when retries run out", async () => {
    ctx.upstream.respondWith(() => ({ content: JSON.stringify({ number: "INV-7", total: 999 }) }));
    const res = await post(ctx.server, "/api/v1/generate/object", request, ctx.key);
    expect(res.status).toBe(502);
    expect(res.json).toMatchObject({ code: "output_invalid", detail: expect.stringMatching(/x-grounded.*after 3 attempts/) });
    expect(res.json.errors).toEqual([{ path: "/total", message: expect.stringMatching(/^was not found in the input or the attachments \(x-grounded/) }]);
    expect(ctx.upstream.requests).toHaveLength(3);
    expect(JSON.stringify(ctx.upstream.requests[1]!.body.messages)).toContain("/total: was not found in the input or the attachments");
    const run = await get(ctx.server, `/api/v1/runs/${res.json.runId}`, ctx.key);
    expect(run.json).toMatchObject({ status: "failed", attempts: 3, error: { code: "output_invalid" } });
  });

  it("passes once the model writes a value that is there", async () => {
    ctx.upstream.reply({ content: JSON.stringify({ number: "INV-7", total: 999 }) }, { content: JSON.stringify({ number: "INV-7", total: 120.5 }) });
    const res = await post(ctx.server, "/api/v1/generate/object", request, ctx.key);
    expect(res.status).toBe(200);
    expect(res.json.object.total).toBe(120.5);
    expect(ctx.upstream.requests).toHaveLength(2);
    // Not asked for: checked, not reported.
    expect(res.json.grounding).toBeUndefined();
  });

  it("must be a boolean", async () => {
    const res = await post(ctx.server, "/api/v1/generate/object", { ...request, schema: { ...schema, properties: { total: { type: "number", "x-grounded": "yes" } } } }, ctx.key);
    expect(res.status).toBe(400);
    expect(res.json.errors).toEqual([{ path: "/schema/properties/total/x-grounded", message: "must be true or false" }]);
  });
});

describe("the suites' grounded expectation", () => {
  it("passes a field whose values are in the case's input and fails one that is not, naming it", async () => {
    const suite = {
      workflow: "no-retry",
      schema: SCHEMA,
      cases: [{ name: "one", input: "Invoice INV-7, total 1.234,50 EUR", expect: { "/number": { grounded: true }, "/total": { grounded: true }, "/note": { grounded: true } } }],
    };
    const put = await fetch(`${ctx.server.url}/api/v1/suites/grounded`, { method: "PUT", headers: { "content-type": "application/json", "api-key": ctx.key }, body: JSON.stringify(suite) });
    expect(put.status).toBe(201);
    ctx.upstream.respondWith(() => ({ content: JSON.stringify(OBJECT) }));
    const started = await post(ctx.server, "/api/v1/suites/grounded/evaluations", {}, ctx.key);
    expect(started.status).toBe(202);
    const report = async () => (await get(ctx.server, `/api/v1/evaluations/${started.json.id}`, ctx.key)).json;
    await waitUntil(async () => (await report()).status === "completed", "the evaluation to complete", 30_000);
    const checks = (await report()).cases[0].runs[0].checks;
    expect(checks.map((c: { path: string; check: string; pass: boolean; reason?: string }) => [c.path, c.check, c.pass, c.reason])).toEqual([
      ["/number", "grounded", true, undefined],
      ["/total", "grounded", true, undefined],
      ["/note", "grounded", false, "not found in the input or attachments: /note (not_found)"],
    ]);
  });
});

describe("a very large document", () => {
  it("is aligned off the event loop within the budget: the server keeps answering, leaves past the budget say so", async () => {
    // ~3 MB of text in which many words recur: every missing multi-word value is compared at many places.
    const words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"];
    const lines = Array.from({ length: 60_000 }, (_, i) => `${words[i % 8]} ${words[(i * 3) % 8]} ${words[(i * 5) % 8]} line ${i}: amount ${(i * 7.25).toFixed(2)}`);
    const document = lines.join("\n");
    const values = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`v${i}`, `${words[i % 8]} ${words[(i + 1) % 8]}x ${words[(i + 2) % 8]}y zulu${i}`]));
    const schema = { type: "object", properties: Object.fromEntries(Object.keys(values).map((k) => [k, { type: "string" }])) };
    ctx.upstream.reply({ content: JSON.stringify(values) });
    let finished = false;
    const pending = post(ctx.server, "/api/v1/generate/object", { input: "Extract.", type: "event", callback: CALLBACK, workflowSlug: "no-retry", schema, grounding: true, attachments: [{ file: b64(document), mimeType: "text/plain" }] }, ctx.key).finally(() => (finished = true));
    const health: number[] = [];
    while (!finished) health.push((await get(ctx.server, "/healthz", null)).status);
    const res = await pending;
    expect(res.status).toBe(200);
    expect(health.length).toBeGreaterThan(0);
    expect(health.every((s) => s === 200)).toBe(true);
    expect(res.json.grounding).toHaveLength(200);
    const reasons = new Set(res.json.grounding.map((l: { reason?: string }) => l.reason));
    expect(reasons.has("budget")).toBe(true);
    expect(res.json.metadata.grounding).toEqual({ grounded: 0, total: 200 });
  });
});
