import Ajv2020 from "ajv/dist/2020";
import { beforeAll, describe, expect, it } from "vitest";
import { INVOICE_SCHEMA } from "../helpers/config";
import type { FakeUpstream } from "../helpers/fake-upstream";
import { useGenserve } from "../helpers/suite";
import { get, post, type GenserveServer } from "../helpers/genserve";
import { readNdjson, readSse, streamRequest } from "../helpers/streams";

const ctx = useGenserve();
let upstream: FakeUpstream;
let server: GenserveServer;
let key: string;
beforeAll(() => void ({ upstream, server, key } = ctx));

const invoice = { number: "INV-9", total: 99, currency: "USD", lines: [{ description: "Desk lamp with a long cable", amount: 99 }] };
const body = (extra: Record<string, unknown> = {}) => ({ input: "Invoice INV-9", workflowSlug: "extract-invoice", schema: INVOICE_SCHEMA, ...extra });

describe("POST /api/v1/stream/object", () => {
  it("streams SSE items whose text concatenates to the validated object, then a done event", async () => {
    // A model slower than its client: the deltas arrive as events of their own, not one at the end
    // (deltas that wait together, as on a machine too busy to keep up, are joined).
    upstream.reply({ content: JSON.stringify(invoice), chunkSize: 5, chunkDelayMs: 20, usage: { prompt_tokens: 40, completion_tokens: 30 } });
    const response = await streamRequest(server.url, key, body());
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const runId = response.headers.get("x-run-id");
    expect(runId).toMatch(/^run_/);
    const { events } = await readSse(response);

    const items = events.filter((e) => e.event === undefined);
    expect(items.length).toBeGreaterThan(1);
    // Ids grow (one per delta; an event that joins deltas has the last one's).
    expect(items.map((e) => Number(e.id))).toEqual(items.map((e) => Number(e.id)).sort((a, b) => a - b));
    expect(new Set(items.map((e) => e.id)).size).toBe(items.length);
    items.forEach((item) => {
      const data = JSON.parse(item.data);
      expect(Object.keys(data).sort()).toEqual(["object", "type"]);
      expect(data.type).toBe("object");
      expect(Object.keys(data.object)).toEqual(["text"]);
    });
    const text = items.map((e) => JSON.parse(e.data).object.text).join("");
    const streamed = JSON.parse(text);
    expect(new Ajv2020().validate(INVOICE_SCHEMA, streamed)).toBe(true);
    expect(streamed).toEqual(invoice);

    const last = events.at(-1)!;
    expect(last.event).toBe("done");
    const done = JSON.parse(last.data);
    expect(done).toEqual({
      runId,
      object: invoice,
      metadata: { runId, cost: "0.000024", model: { name: "fake-7b-served", tag: "fast" }, durationInMs: expect.any(Number), inputTokens: 40, outputTokens: 30 },
    });
    expect(upstream.requests[0]!.body.stream).toBe(true);
    const stored = await get(server, `/api/v1/runs/${runId}`, key);
    expect(stored.json).toMatchObject({ status: "succeeded", operation: "stream.object", output: invoice });
  });

  it("speaks NDJSON when asked, ending with a done line", async () => {
    upstream.reply({ content: JSON.stringify(invoice), chunkSize: 16 });
    const response = await streamRequest(server.url, key, body(), { accept: "application/x-ndjson" });
    expect(response.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
    const lines = await readNdjson(response);
    const items = lines.slice(0, -1);
    expect(items.every((l) => l.type === "object")).toBe(true);
    expect(JSON.parse(items.map((l) => (l.object as { text: string }).text).join(""))).toEqual(invoice);
    expect(lines.at(-1)).toMatchObject({ type: "done", object: invoice, runId: response.headers.get("x-run-id") });
  });

  it("ends with an error event, never a clean end, when the upstream is cut mid-stream", async () => {
    upstream.reply({ content: JSON.stringify(invoice), chunkSize: 4, cutAfterChunks: 3 });
    const response = await streamRequest(server.url, key, body({ workflowSlug: "no-retry" }));
    expect(response.status).toBe(200);
    const { events } = await readSse(response);
    const last = events.at(-1)!;
    expect(last.event).toBe("error");
    const problem = JSON.parse(last.data);
    expect(problem).toMatchObject({ code: "model_error", status: 502, runId: response.headers.get("x-run-id") });
    const stored = await get(server, `/api/v1/runs/${problem.runId}`, key);
    expect(stored.json.status).toBe("failed");
  });

  it("announces a retry with a restart event and then streams the valid object", async () => {
    upstream.reply({ content: '{"number": 1}', chunkSize: 4 }, { content: JSON.stringify(invoice), chunkSize: 8 });
    const response = await streamRequest(server.url, key, body());
    const { events } = await readSse(response);
    const restartAt = events.findIndex((e) => e.event === "restart");
    expect(restartAt).toBeGreaterThan(0);
    const before = events.slice(0, restartAt).map((e) => JSON.parse(e.data).object.text).join("");
    expect(before).toBe('{"number": 1}');
    const after = events.slice(restartAt + 1, -1).map((e) => JSON.parse(e.data).object.text).join("");
    expect(JSON.parse(after)).toEqual(invoice);
    expect(events.at(-1)!.event).toBe("done");
  });

  it("ends with an error event naming output_invalid when every attempt is invalid", async () => {
    upstream.reply({ content: '{"number": 1}' });
    const response = await streamRequest(server.url, key, body({ workflowSlug: "no-retry" }), { accept: "application/x-ndjson" });
    const lines = await readNdjson(response);
    expect(lines.at(-1)).toMatchObject({ type: "error", error: { code: "output_invalid", errors: expect.any(Array), lastOutput: '{"number": 1}' } });
  });

  it("answers validation and auth errors as problem+json before any stream starts", async () => {
    const neither = await post(server, "/api/v1/stream/object", { input: "x", schema: INVOICE_SCHEMA }, key);
    expect(neither.status).toBe(400);
    expect(neither.json.errors.map((e: { path: string }) => e.path)).toEqual(["/workflowSlug", "/threadId"]);
    const callbackSent = await post(server, "/api/v1/stream/object", { ...body(), type: "event" }, key);
    expect(callbackSent.status).toBe(400);
    expect(callbackSent.json.errors).toEqual([{ path: "/type", message: "is not a known field" }]);
    const noKey = await post(server, "/api/v1/stream/object", body(), null);
    expect(noKey.status).toBe(401);
    expect(noKey.headers.get("content-type")).toBe("application/problem+json");
    const badThread = await post(server, "/api/v1/stream/object", { input: "x", schema: INVOICE_SCHEMA, threadId: "bad id!" }, key);
    expect(badThread.status).toBe(400);
    const unknownThread = await post(server, "/api/v1/stream/object", { input: "x", schema: INVOICE_SCHEMA, threadId: "t-1" }, key);
    expect(unknownThread.status).toBe(404);
    expect(unknownThread.json.code).toBe("thread_not_found");
    expect(upstream.requests).toHaveLength(0);
  });

  it("completes and records the run when the client disconnects", async () => {
    upstream.reply({ content: JSON.stringify(invoice), chunkSize: 4, chunkDelayMs: 20 });
    const response = await streamRequest(server.url, key, body());
    const runId = response.headers.get("x-run-id")!;
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel();
    let status = "running";
    for (let i = 0; i < 100 && status === "running"; i++) {
      await new Promise((r) => setTimeout(r, 50));
      status = (await get(server, `/api/v1/runs/${runId}`, key)).json.status;
    }
    expect(status).toBe("succeeded");
  });
});

describe("POST /api/v1/stream/object, how the stream is written", () => {
  it("answers with its head, X-Run-ID included, before the model's first token", async () => {
    upstream.reply({ content: JSON.stringify(invoice), delayMs: 1_500 });
    const started = Date.now();
    const response = await streamRequest(server.url, key, body());
    const headAfterMs = Date.now() - started;
    expect(response.headers.get("x-run-id")).toMatch(/^run_/);
    expect(headAfterMs).toBeLessThan(1_000);
    const { events } = await readSse(response);
    expect(events.at(-1)!.event).toBe("done");
  });

  it("waits for a client that stops reading and then delivers every event, in order", async () => {
    // Far more than the connection's buffers hold: the server must stop and wait for them to drain.
    const long = { ...invoice, lines: [{ description: "x".repeat(6 * 1024 * 1024), amount: 99 }] };
    upstream.reply({ content: JSON.stringify(long), chunkSize: 64 * 1024 });
    const response = await streamRequest(server.url, key, body());
    await new Promise((r) => setTimeout(r, 1_500)); // not reading meanwhile
    const { events } = await readSse(response);
    const items = events.filter((e) => e.event === undefined);
    // In order: ids grow (deltas that waited together while the client did not read went out as one).
    const ids = items.map((e) => Number(e.id));
    expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
    expect(JSON.parse(items.map((e) => JSON.parse(e.data).object.text).join(""))).toEqual(long);
    expect(events.at(-1)!.event).toBe("done");
  }, 30_000);
});
