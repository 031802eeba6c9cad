import type { EventSourceMessage } from "eventsource-parser";
import { createParser } from "eventsource-parser";
import { describe, expect, it } from "vitest";
import { INVOICE_SCHEMA } from "../helpers/config";
import { readNdjson, readSse, streamRequest } from "../helpers/streams";
import { useGenserve } from "../helpers/suite";

const ctx = useGenserve();

const invoice = { number: "INV-7", total: 40, currency: "EUR", lines: [{ description: "Two boxes of long-life paper clips", amount: 15 }, { description: "A stapler", amount: 25 }] };
const body = (extra: Record<string, unknown> = {}) => ({ input: "Invoice INV-7", workflowSlug: "extract-invoice", schema: INVOICE_SCHEMA, ...extra });
const withFields = (url: string, key: string, payload: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}/api/v1/stream/object?fields=true`, { method: "POST", headers: { "content-type": "application/json", "api-key": key, ...headers }, body: JSON.stringify(payload) });

/** The pointers of the invoice, in the order their values close. */
const ORDER = ["/number", "/total", "/currency", "/lines/0/description", "/lines/0/amount", "/lines/0", "/lines/1/description", "/lines/1/amount", "/lines/1", "/lines", ""];

const valueAt = (pointer: string): unknown => pointer.split("/").slice(1).reduce<any>((v, k) => v[k], invoice);
const data = (e: EventSourceMessage) => JSON.parse(e.data);

describe("field events on POST /api/v1/stream/object?fields=true", () => {
  it("reports each value once as it closes, after the text that closes it, valid, then done", async () => {
    ctx.upstream.reply({ content: JSON.stringify(invoice), chunkSize: 5, chunkDelayMs: 5 });
    const response = await withFields(ctx.server.url, ctx.key, body());
    expect(response.status).toBe(200);
    const { events } = await readSse(response);
    const ids = events.map((e) => Number(e.id));
    expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));

    const fields = events.filter((e) => e.event === "field").map(data);
    expect(fields.map((f) => f.pointer)).toEqual(ORDER);
    for (const field of fields) {
      expect(Object.keys(field).sort()).toEqual(["attempt", "pointer", "type", "valid", "value"]);
      expect(field).toMatchObject({ type: "field", attempt: 1, valid: true });
      expect(field.value).toEqual(field.pointer === "" ? invoice : valueAt(field.pointer));
    }
    // A field event comes after the item whose text completes its value, before the text that follows.
    let text = "";
    for (const event of events) {
      if (event.event === undefined) text += data(event).object.text;
      if (event.event !== "field") continue;
      const { pointer } = data(event);
      if (pointer === "") expect(JSON.parse(text)).toEqual(invoice);
      else expect(text).toContain(JSON.stringify(valueAt(pointer)));
    }
    expect(events.at(-1)!.event).toBe("done");
    expect(data(events.at(-1)!).object).toEqual(invoice);
  });

  it("speaks NDJSON too: field lines between the items", async () => {
    ctx.upstream.reply({ content: JSON.stringify(invoice), chunkSize: 7 });
    const lines = await readNdjson(await withFields(ctx.server.url, ctx.key, body(), { accept: "application/x-ndjson" }));
    const fields = lines.filter((l) => l.type === "field");
    expect(fields.map((f) => f.pointer)).toEqual(ORDER);
    expect(fields.every((f) => f.valid === true && f.attempt === 1)).toBe(true);
    expect(JSON.parse(lines.filter((l) => l.type === "object").map((l) => (l.object as { text: string }).text).join(""))).toEqual(invoice);
    expect(lines.at(-1)).toMatchObject({ type: "done", object: invoice });
  });

  it("a discarded attempt: its failing field, restart, then the next attempt's fields", async () => {
    ctx.upstream.reply({ content: '{"number": 1, "total": 2}', chunkSize: 4 }, { content: JSON.stringify(invoice), chunkSize: 8 });
    const { events } = await readSse(await withFields(ctx.server.url, ctx.key, body()));
    const restartAt = events.findIndex((e) => e.event === "restart");
    expect(restartAt).toBeGreaterThan(0);
    const before = events.slice(0, restartAt).filter((e) => e.event === "field").map(data);
    // The attempt stops at the first part that can never validate: nothing of it after that.
    expect(before).toEqual([{ type: "field", attempt: 1, pointer: "/number", value: 1, valid: false }]);
    expect(data(events[restartAt]!)).toEqual({ type: "restart", attempt: 2 });
    const after = events.slice(restartAt + 1).filter((e) => e.event === "field").map(data);
    expect(after.map((f) => f.pointer)).toEqual(ORDER);
    expect(after.every((f) => f.attempt === 2 && f.valid === true)).toBe(true);
    expect(events.at(-1)!.event).toBe("done");
  });

  it("resumes after Last-Event-ID with the same events: no gap, no repeat", async () => {
    ctx.upstream.reply({ content: JSON.stringify(invoice), chunkSize: 4, chunkDelayMs: 15 });
    const first = await withFields(ctx.server.url, ctx.key, body());
    const runId = first.headers.get("x-run-id")!;
    // Past the first field event, so that the cut falls among them.
    const seen: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (e) => seen.push(e) });
    const reader = first.body!.getReader();
    const decoder = new TextDecoder();
    while (!seen.some((e) => e.event === "field")) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
    await reader.cancel();
    const lastId = seen.at(-1)!.id!;
    const { events: rest } = await readSse(await fetch(`${ctx.server.url}/api/v1/runs/${runId}/stream`, { headers: { "api-key": ctx.key, "last-event-id": lastId } }));
    expect(Number(rest[0]!.id)).toBeGreaterThan(Number(lastId));
    expect(rest.at(-1)!.event).toBe("done");

    // The whole stream again from the start: the same field events, with the same ids.
    const { events: all } = await readSse(await fetch(`${ctx.server.url}/api/v1/runs/${runId}/stream`, { headers: { "api-key": ctx.key } }));
    const fieldsOf = (list: EventSourceMessage[]) => list.filter((e) => e.event === "field").map((e) => ({ id: e.id, ...data(e) }));
    expect([...fieldsOf(seen), ...fieldsOf(rest)]).toEqual(fieldsOf(all));
    expect(fieldsOf(all).map((f) => f.pointer)).toEqual(ORDER);
    const text = [...seen, ...rest].filter((e) => e.event === undefined).map((e) => data(e).object.text).join("");
    expect(JSON.parse(text)).toEqual(invoice);
    const ids = [...seen, ...rest].map((e) => Number(e.id));
    expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
    expect(ids.at(-1)).toBe(Number(all.at(-1)!.id));
  });

  it("valid is null where a value cannot be judged alone, and the root's is the whole object's validation", async () => {
    const schema = { type: "object", properties: { id: { anyOf: [{ type: "string" }, { type: "integer" }] }, name: { type: "string" } }, required: ["id", "name", "kind"] };
    ctx.upstream.reply({ content: '{"id": 5, "name": "x"}', chunkSize: 3 });
    const lines = await readNdjson(await withFields(ctx.server.url, ctx.key, body({ schema, workflowSlug: "no-retry" }), { accept: "application/x-ndjson" }));
    expect(lines.filter((l) => l.type === "field").map(({ pointer, valid }) => ({ pointer, valid }))).toEqual([
      { pointer: "/id", valid: null },
      { pointer: "/name", valid: true },
      // "kind" is missing: only the whole object can tell.
      { pointer: "", valid: false },
    ]);
    expect(lines.at(-1)).toMatchObject({ type: "error", error: { code: "output_invalid" } });
  });

  it("without ?fields the stream is as before, byte for byte", async () => {
    ctx.upstream.reply({ content: JSON.stringify(invoice), chunkSize: 100_000, usage: { prompt_tokens: 40, completion_tokens: 30 } });
    const response = await streamRequest(ctx.server.url, ctx.key, body());
    const runId = response.headers.get("x-run-id")!;
    const text = (await response.text()).replace(/"durationInMs":\d+/, '"durationInMs":0');
    const item = JSON.stringify({ type: "object", object: { text: JSON.stringify(invoice) } });
    const metadata = { runId, cost: "0.000024", model: { name: "fake-7b-served", tag: "fast" }, durationInMs: 0, inputTokens: 40, outputTokens: 30 };
    expect(text).toBe(`id: 1\ndata: ${item}\n\nid: 2\nevent: done\ndata: ${JSON.stringify({ runId, object: invoice, metadata })}\n\n`);
  });
});
