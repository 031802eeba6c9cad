import { describe, expect, it } from "vitest";
import { INVOICE_SCHEMA } from "../helpers/config";
import { createKey, get, post } from "../helpers/genserve";
import { readSse, streamRequest } from "../helpers/streams";
import { useGenserve } from "../helpers/suite";
import { createParser, type EventSourceMessage } from "eventsource-parser";

const ctx = useGenserve(`
limits:
  streamRetentionMs: 1000
  streamKeepAliveMs: 200
`);

const invoice = { number: "INV-42", total: 12, currency: "EUR", lines: [{ description: "A description long enough to take many chunks to stream", amount: 12 }] };
const body = (extra: Record<string, unknown> = {}) => ({ input: "Invoice INV-42", workflowSlug: "extract-invoice", schema: INVOICE_SCHEMA, ...extra });

/** Reads SSE events until `count` have arrived, then drops the connection. */
async function readSome(response: Response, count: number): Promise<EventSourceMessage[]> {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e) });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  while (events.length < count) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.feed(decoder.decode(value, { stream: true }));
  }
  await reader.cancel();
  return events;
}

const waitFor = async (check: () => Promise<boolean>, what: string) => {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
};

describe("resuming a stream", () => {
  it("replays what was missed after Last-Event-ID and follows the run to its end", async () => {
    // Made first: the events are kept only 1 s after the run ends here.
    const other = await createKey("other", { dataDir: ctx.server.dataDir });
    ctx.upstream.reply({ content: JSON.stringify(invoice), chunkSize: 4, chunkDelayMs: 15 });
    const first = await streamRequest(ctx.server.url, ctx.key, body());
    const runId = first.headers.get("x-run-id")!;
    const seen = await readSome(first, 5);
    const lastId = seen.at(-1)!.id!;

    const resumed = await fetch(`${ctx.server.url}/api/v1/runs/${runId}/stream`, { headers: { "api-key": ctx.key, "last-event-id": lastId } });
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const { events: rest } = await readSse(resumed);
    expect(Number(rest[0]!.id)).toBeGreaterThan(Number(lastId));
    expect(rest.at(-1)!.event).toBe("done");
    const text = [...seen, ...rest.slice(0, -1)].map((e) => JSON.parse(e.data).object.text).join("");
    expect(JSON.parse(text)).toEqual(invoice);

    // Another key cannot follow it; a replay from the start gives everything again.
    expect((await get(ctx.server, `/api/v1/runs/${runId}/stream`, other.key)).status).toBe(404);
    const all = await readSse(await fetch(`${ctx.server.url}/api/v1/runs/${runId}/stream`, { headers: { "api-key": ctx.key } }));
    // Replayed at once, the items come joined (ids still growing, the text whole).
    const ids = all.events.map((e) => Number(e.id));
    expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
    expect(JSON.parse(all.events.slice(0, -1).map((e) => JSON.parse(e.data).object.text).join(""))).toEqual(invoice);
  });

  it("after the retention time, ends with the stored outcome", async () => {
    ctx.upstream.reply({ content: JSON.stringify(invoice) });
    const response = await streamRequest(ctx.server.url, ctx.key, body());
    const runId = response.headers.get("x-run-id")!;
    await readSse(response);
    await new Promise((r) => setTimeout(r, 2_600));
    const late = await fetch(`${ctx.server.url}/api/v1/runs/${runId}/stream`, { headers: { "api-key": ctx.key, "last-event-id": "3" } });
    const { events } = await readSse(late);
    expect(events).toHaveLength(1);
    expect(events[0]!.event).toBe("done");
    expect(JSON.parse(events[0]!.data).object).toEqual(invoice);
  });
});

describe("keep-alive", () => {
  it("sends ': ping' comments while the model is silent, invisible to data readers", async () => {
    ctx.upstream.reply({ content: JSON.stringify(invoice), delayMs: 900 });
    const { events, comments } = await readSse(await streamRequest(ctx.server.url, ctx.key, body()));
    expect(comments.filter((c) => c.trim() === "ping").length).toBeGreaterThanOrEqual(2);
    expect(events.at(-1)!.event).toBe("done");
  });
});

describe("cancelOnDisconnect", () => {
  it("stops generation and frees the model when the client goes away", async () => {
    ctx.upstream.reply({ content: JSON.stringify(invoice).repeat(1).padEnd(400, " "), chunkSize: 4, chunkDelayMs: 40 });
    const response = await fetch(`${ctx.server.url}/api/v1/stream/object?cancelOnDisconnect=true`, {
      method: "POST",
      headers: { "content-type": "application/json", "api-key": ctx.key },
      body: JSON.stringify(body({ workflowSlug: "no-retry" })),
    });
    const runId = response.headers.get("x-run-id")!;
    await readSome(response, 2);
    await waitFor(async () => ctx.upstream.requests[0]!.closedEarly, "the upstream request to be cancelled");
    await waitFor(async () => (await get(ctx.server, `/api/v1/runs/${runId}`, ctx.key)).json.status === "cancelled", "the run to be recorded");
    expect((await get(ctx.server, `/api/v1/runs/${runId}`, ctx.key)).json.error.code).toBe("cancelled");
  });
});

describe("validated partials", () => {
  it("stops an attempt as soon as a closed part can never validate, and retries", async () => {
    const doomed = `{"number": "INV-1", "currency": "GBP", "total": 3, "lines": [${Array.from({ length: 40 }, () => '{"description": "padding line"}').join(",")}]}`;
    ctx.upstream.reply({ content: doomed, chunkSize: 8, chunkDelayMs: 5 }, { content: JSON.stringify(invoice), chunkSize: 16 });
    const response = await streamRequest(ctx.server.url, ctx.key, body());
    const { events } = await readSse(response);
    const restartAt = events.findIndex((e) => e.event === "restart");
    expect(restartAt).toBeGreaterThan(0);
    const before = events.slice(0, restartAt).map((e) => JSON.parse(e.data).object.text).join("");
    // Stopped right after "currency" closed, long before the rest of the doomed object.
    expect(before.length).toBeLessThan(80);
    expect(before).toContain('"GBP"');
    expect(ctx.upstream.requests[0]!.closedEarly).toBe(true);
    const feedback = ctx.upstream.requests[1]!.body.messages.at(-1)!.content as string;
    expect(feedback).toContain("/currency: must be one of");
    expect(events.at(-1)!.event).toBe("done");
    expect(JSON.parse(events.at(-1)!.data).object).toEqual(invoice);
  });

  it("stops at an additional property the schema forbids", async () => {
    ctx.upstream.reply({ content: '{"number": "1", "surprise": true, "total": 1, "currency": "EUR"}', chunkSize: 4 }, { content: JSON.stringify(invoice) });
    const { events } = await readSse(await streamRequest(ctx.server.url, ctx.key, body()));
    expect(events.some((e) => e.event === "restart")).toBe(true);
    expect(ctx.upstream.requests[1]!.body.messages.at(-1)!.content).toContain('must not have additional property "surprise"');
  });
});

describe("threads", () => {
  it("creates a thread on first use, sends its history to the model, and keeps it per key", async () => {
    const threadId = `t-${Date.now()}`;
    ctx.upstream.reply({ content: '{"number": "A-1", "total": 1, "currency": "EUR"}' }, { content: '{"number": "A-2", "total": 2, "currency": "EUR"}' });
    const first = await readSse(await streamRequest(ctx.server.url, ctx.key, body({ threadId, input: "first question" })));
    expect(first.events.at(-1)!.event).toBe("done");
    // Only the thread id now: the thread names the workflow.
    const second = await readSse(await streamRequest(ctx.server.url, ctx.key, { input: "second question", schema: INVOICE_SCHEMA, threadId }));
    expect(second.events.at(-1)!.event).toBe("done");
    const sent = ctx.upstream.requests[1]!.body.messages.filter((m) => m.role !== "system");
    expect(sent).toEqual([
      { role: "user", content: "first question" },
      { role: "assistant", content: '{"number":"A-1","total":1,"currency":"EUR"}' },
      { role: "user", content: "second question" },
    ]);

    const thread = await get(ctx.server, `/api/v1/threads/${threadId}`, ctx.key);
    expect(thread.json).toMatchObject({ id: threadId, workflowSlug: "extract-invoice" });
    expect(thread.json.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);

    const other = await createKey("stranger", { dataDir: ctx.server.dataDir });
    expect((await get(ctx.server, `/api/v1/threads/${threadId}`, other.key)).status).toBe(404);
    const foreign = await post(ctx.server, "/api/v1/stream/object", { input: "x", schema: INVOICE_SCHEMA, threadId }, other.key);
    expect(foreign.status).toBe(404);
    expect(foreign.json.code).toBe("thread_not_found");
    expect(foreign.text).not.toContain("first question");

    const deleted = await fetch(`${ctx.server.url}/api/v1/threads/${threadId}`, { method: "DELETE", headers: { "api-key": ctx.key } });
    expect(deleted.status).toBe(204);
    expect((await get(ctx.server, `/api/v1/threads/${threadId}`, ctx.key)).status).toBe(404);
  });

  it("creates threads through the API and refuses duplicates and bad ids", async () => {
    const created = await post(ctx.server, "/api/v1/threads", { workflowSlug: "extract-invoice", id: "support:42" }, ctx.key);
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe("/api/v1/threads/support%3A42");
    expect((await post(ctx.server, "/api/v1/threads", { workflowSlug: "extract-invoice", id: "support:42" }, ctx.key)).status).toBe(409);
    const generated = await post(ctx.server, "/api/v1/threads", { workflowSlug: "extract-invoice" }, ctx.key);
    expect(generated.json.id).toMatch(/^thr_/);
    expect((await post(ctx.server, "/api/v1/threads", { workflowSlug: "extract-invoice", id: "no spaces" }, ctx.key)).status).toBe(400);
    expect((await post(ctx.server, "/api/v1/threads", { workflowSlug: "nope" }, ctx.key)).status).toBe(404);
  });

  it("drops the oldest exchanges first when the history would not fit the context window", async () => {
    const threadId = `long-${Date.now()}`;
    const long = (n: number) => `question ${n} ${"x".repeat(2000)}`; // ~500 tokens: two exchanges fit the window
    for (let n = 1; n <= 4; n++) {
      ctx.upstream.reply({ content: '{"number": "1", "total": 1, "currency": "EUR"}' });
      await readSse(await streamRequest(ctx.server.url, ctx.key, body({ threadId, input: long(n), workflowSlug: "small-window" })));
    }
    ctx.upstream.reset();
    ctx.upstream.reply({ content: '{"number": "1", "total": 1, "currency": "EUR"}' });
    await readSse(await streamRequest(ctx.server.url, ctx.key, body({ threadId, input: "latest", workflowSlug: "small-window" })));
    const users = ctx.upstream.requests[0]!.body.messages.filter((m) => m.role === "user").map((m) => String(m.content).slice(0, 10));
    expect(users.at(-1)).toBe("latest");
    expect(users).toContain("question 4");
    expect(users).not.toContain("question 1");
  });
});
