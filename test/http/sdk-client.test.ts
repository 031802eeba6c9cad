import { generateObject, generateText, streamObject, streamText } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { PartialJsonParser } from "../../lib/json/partial";
import { createGenserve } from "../../lib/sdk/ai-provider";
import { createClient, GenserveLimitError, GenserveNotFoundError, GenserveRunError, GenserveValidationError, jsonSchema, verifyCallback, type GenserveClient } from "../../lib/sdk/client";
import { ObjectStreamState } from "../../lib/sdk/stream-state";
import { INVOICE_SCHEMA } from "../helpers/config";
import { createKey, get, post } from "../helpers/genserve";
import { startReceiver, waitUntil } from "../helpers/receiver";
import { useGenserve } from "../helpers/suite";
import { startTcpProxy } from "../helpers/tcp-proxy";

// The TypeScript client (lib/sdk), its React state and its AI SDK provider against a real genserve
// on loopback, its model a fake OpenAI-compatible upstream.
const ctx = useGenserve(`
network:
  allowPrivate: true
limits:
  callbackPollMs: 100
`);

const Invoice = z.object({
  number: z.string(),
  total: z.number().min(0),
  currency: z.enum(["EUR", "USD"]),
  lines: z.array(z.object({ description: z.string(), amount: z.number().optional() })).optional(),
});
const invoice = { number: "INV-42", total: 12, currency: "EUR" as const, lines: [{ description: "A description long enough to take many chunks to stream", amount: 12 }] };
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let caller: { id: string; key: string; webhookSecret: string };
let client: GenserveClient;
const callback = () => ({ url: receiver.url, customProperties: { ticket: 7 } });

beforeAll(async () => {
  receiver = await startReceiver();
  caller = await createKey("sdk", { dataDir: ctx.server.dataDir });
  client = createClient({ baseURL: ctx.server.url, apiKey: caller.key, maxRetries: 0 });
});
afterAll(async () => receiver?.close());

const runOf = async (runId: string) => (await get(ctx.server, `/api/v1/runs/${runId}`, caller.key)).json;

describe("the client's generate operations", () => {
  it("generateObject: a typed object from a zod schema, its metadata and run id", async () => {
    ctx.upstream.reply({ content: JSON.stringify(invoice), usage: { prompt_tokens: 20, completion_tokens: 10 } });
    const { object, metadata, runId } = await client.generateObject({ workflow: "extract-invoice", input: "Invoice INV-42", schema: Invoice, callback: callback() });
    const total: number = object.total;
    expect(total).toBe(12);
    expect(object).toEqual(invoice);
    expect(metadata).toMatchObject({ runId, inputTokens: 20, outputTokens: 10 });
    expect(runId).toMatch(/^run_/);
    // The upstream was asked for the zod schema, converted to JSON Schema.
    expect(ctx.upstream.requests[0]!.body.response_format?.json_schema?.schema).toMatchObject({ properties: { currency: { enum: ["EUR", "USD"] } } });
  });

  it("generateText, and a JSON Schema typed with jsonSchema<T>()", async () => {
    ctx.upstream.reply({ content: "Hello there" });
    const text = await client.generateText({ workflow: "no-retry", input: "Say hello", callback: callback() });
    expect(text).toMatchObject({ text: "Hello there", runId: expect.stringMatching(/^run_/) });
    ctx.upstream.reply({ content: JSON.stringify({ number: "INV-1", total: 1, currency: "USD" }) });
    const typed = jsonSchema<{ number: string; total: number; currency: "EUR" | "USD" }>(INVOICE_SCHEMA);
    const { object } = await client.generateObject({ workflow: "no-retry", input: "x", schema: typed, callback: callback() });
    const currency: "EUR" | "USD" = object.currency;
    expect(currency).toBe("USD");
  });

  it("answers errors as typed classes with the problem's code, status, retryable, field errors and run id", async () => {
    const invalid = await client.generateObject({ workflow: "no such/slug", input: "", schema: INVOICE_SCHEMA, callback: callback() }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(GenserveValidationError);
    expect(invalid).toMatchObject({ code: "validation_failed", status: 400, retryable: false });
    expect((invalid as GenserveValidationError).errors.map((e) => e.path).sort()).toEqual(["/input", "/workflowSlug"]);

    const missing = await client.generateText({ workflow: "nope", input: "x", callback: callback() }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(GenserveNotFoundError);
    expect(missing).toMatchObject({ code: "workflow_not_found", status: 404 });

    ctx.upstream.reply({ content: '{"number": 1}' });
    const failed = (await client.generateObject({ workflow: "no-retry", input: "x", schema: INVOICE_SCHEMA, callback: callback() }).catch((e: unknown) => e)) as GenserveRunError;
    expect(failed).toBeInstanceOf(GenserveRunError);
    expect(failed).toMatchObject({ code: "output_invalid", status: 502, retryable: true, runId: expect.stringMatching(/^run_/) });
    expect(failed.lastOutput).toBe('{"number": 1}');
    expect(failed.errors.length).toBeGreaterThan(0);
    expect((await runOf(failed.runId!)).status).toBe("failed");
  });

  it("retries only what is retryable, after the server's Retry-After", async () => {
    // A key that may run one run at once: a second run is refused (429, Retry-After: 1) while the first is held.
    const created = await post(ctx.server, "/api/v1/keys", { name: "one-at-a-time", limits: { concurrency: 1 } }, ctx.key);
    expect(created.status).toBe(201);
    let release!: () => void;
    ctx.upstream.reply({ content: JSON.stringify(invoice), waitFor: new Promise<void>((resolve) => (release = resolve)) }, { content: JSON.stringify(invoice) });
    const retries: { delayMs: number; code: string }[] = [];
    const statuses: number[] = [];
    let firstDone: Promise<void> = Promise.resolve();
    const limited = createClient({
      baseURL: ctx.server.url,
      apiKey: created.json.key,
      fetch: async (url, init) => {
        // The retry waits for the first run's answer (its slot free again), however slow the machine.
        if (statuses.includes(429)) await firstDone;
        const response = await fetch(url, init);
        statuses.push(response.status);
        // The refusal seen: let the first run finish, so the retry finds the key free.
        if (response.status === 429) release();
        return response;
      },
      onRetry: ({ delayMs, error }) => retries.push({ delayMs, code: error.code }),
    });
    const first = limited.generateObject({ workflow: "extract-invoice", input: "a", schema: Invoice, callback: callback() });
    firstDone = first.then(() => undefined);
    await waitUntil(() => ctx.upstream.requests.length === 1, "the first run to reach the model");
    const second = await limited.generateObject({ workflow: "extract-invoice", input: "b", schema: Invoice, callback: callback() });
    expect(second.object).toEqual(invoice);
    await first;
    expect(retries).toEqual([{ delayMs: 1000, code: "rate_limited" }]);
    expect(statuses).toEqual([429, 200, 200]);

    // Not retryable: sent once.
    statuses.length = 0;
    await expect(limited.generateText({ workflow: "nope", input: "x", callback: callback() })).rejects.toBeInstanceOf(GenserveNotFoundError);
    expect(statuses).toEqual([404]);
  });

  it("a limit error says how long to wait when retries run out", async () => {
    const created = await post(ctx.server, "/api/v1/keys", { name: "one-a-minute", limits: { rpm: 1 } }, ctx.key);
    const limited = createClient({ baseURL: ctx.server.url, apiKey: created.json.key, maxRetries: 0 });
    ctx.upstream.reply({ content: "ok" });
    await limited.generateText({ workflow: "no-retry", input: "x", callback: callback() });
    const refused = await limited.generateText({ workflow: "no-retry", input: "x", callback: callback() }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(GenserveLimitError);
    expect((refused as GenserveLimitError).retryAfterMs).toBeGreaterThanOrEqual(1000);
  });

  it("async runs: submitObject queues (Prefer: respond-async), waitForRun follows it to its end; an idempotency key replays", async () => {
    ctx.upstream.reply({ content: JSON.stringify(invoice) });
    const queued = await client.submitObject({ workflow: "extract-invoice", input: "Invoice", schema: Invoice, callback: callback(), idempotencyKey: "sdk-async-1" });
    expect(queued).toMatchObject({ status: "queued", runId: expect.stringMatching(/^run_/) });
    const again = await client.submitObject({ workflow: "extract-invoice", input: "Invoice", schema: Invoice, callback: callback(), idempotencyKey: "sdk-async-1" });
    expect(again.runId).toBe(queued.runId);
    const run = await client.waitForRun(queued.runId, { pollIntervalMs: 50 });
    expect(run).toMatchObject({ status: "succeeded", output: invoice });
    expect(ctx.upstream.requests).toHaveLength(1);

    ctx.upstream.reply({ content: '{"number": 1}' });
    const bad = await client.submitObject({ workflow: "no-retry", input: "x", schema: INVOICE_SCHEMA, callback: callback() });
    const failure = await client.waitForRun(bad.runId, { pollIntervalMs: 50 }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(GenserveRunError);
    expect(failure).toMatchObject({ code: "output_invalid", runId: bad.runId });
  });

  it("verifyCallback accepts the callback genserve delivered, and refuses it under another secret", async () => {
    receiver.reset();
    ctx.upstream.reply({ content: JSON.stringify(invoice) });
    const { runId } = await client.generateObject({ workflow: "no-retry", input: "x", schema: Invoice, callback: callback() });
    await waitUntil(() => receiver.received.some((r) => r.body.includes(runId)), "the callback");
    const delivered = receiver.received.find((r) => r.body.includes(runId))!;
    const event = await verifyCallback<z.infer<typeof Invoice>>(delivered.body, delivered.headers, caller.webhookSecret);
    expect(event).toMatchObject({ type: "run.succeeded", data: { runId, object: invoice, customProperties: { ticket: 7 } } });
    const other = await createKey("other-secret", { dataDir: ctx.server.dataDir });
    await expect(verifyCallback(delivered.body, delivered.headers, other.webhookSecret)).rejects.toThrow(/No signature matches/);
  });
});

describe("the client's object streams", () => {
  it("resume by themselves across a connection cut mid-stream: every partial once, in order, and the right final object", async () => {
    const content = JSON.stringify(invoice);
    ctx.upstream.reply({ content, chunkSize: 4, pauseAfterChunks: [6] });
    const port = Number(new URL(ctx.server.url).port);
    const proxy = await startTcpProxy({ host: "127.0.0.1", port });
    const reconnects: number[] = [];
    try {
      const viaProxy = createClient({ baseURL: `http://127.0.0.1:${proxy.port}`, apiKey: caller.key });
      const stream = await viaProxy.streamObject({ workflow: "extract-invoice", input: "Invoice INV-42", schema: Invoice, onReconnect: (id) => reconnects.push(id) });
      expect(stream.runId).toMatch(/^run_/);
      const deltas: string[] = [];
      const partials: unknown[] = [];
      const ids: number[] = [];
      let final: unknown;
      for await (const part of stream) {
        if (part.type === "partial") {
          deltas.push(part.delta);
          partials.push(part.object);
          ids.push(part.id);
          if (deltas.length === 1) {
            // The model is paused mid-object: cut every connection, then let the rest be generated
            // while the client is away.
            await waitUntil(async () => (await (await fetch(`${ctx.upstream.url}/__paused`)).json()).paused === 1, "the model to pause");
            proxy.cut();
            proxy.restore();
            await fetch(`${ctx.upstream.url}/__release`, { method: "POST" });
          }
        } else if (part.type === "done") final = part.object;
      }
      expect(reconnects.length).toBeGreaterThanOrEqual(1);
      expect(final).toEqual(invoice);
      expect(deltas.join("")).toBe(content);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(ids.length);
      // Each partial is what the text up to its delta says, so none was skipped, repeated or reordered.
      const reference = new PartialJsonParser();
      deltas.forEach((delta, i) => {
        reference.push(delta);
        expect(partials[i]).toEqual(reference.snapshot().value);
      });
      expect((await stream.result()).object).toEqual(invoice);
    } finally {
      await proxy.close();
    }
  });

  it("an abort with cancelOnAbort stops the stream and cancels the run on the server", async () => {
    ctx.upstream.reply({ content: JSON.stringify(invoice), chunkSize: 4, holdAfterChunks: 3 });
    const abort = new AbortController();
    const stream = await client.streamObject({ workflow: "no-retry", input: "x", schema: Invoice, signal: abort.signal, cancelOnAbort: true });
    const seen: string[] = [];
    const ended = await (async () => {
      for await (const part of stream) {
        seen.push(part.type);
        if (part.type === "partial") abort.abort();
      }
    })().catch((e: unknown) => e);
    expect(seen[0]).toBe("partial");
    expect((ended as Error).name).toBe("AbortError");
    await waitUntil(async () => (await runOf(stream.runId)).status === "cancelled", "the run to be cancelled");
  });

  it("throw the run's error as a typed error", async () => {
    ctx.upstream.reply({ content: '{"number": 1}' });
    const stream = await client.streamObject({ workflow: "no-retry", input: "x", schema: INVOICE_SCHEMA });
    const failure = await stream.result().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(GenserveRunError);
    expect(failure).toMatchObject({ code: "output_invalid", runId: stream.runId });
  });

  it("useObjectStream's state: partial objects, then the final one; stop() cancels the run", async () => {
    // The model pauses after 24 characters until the first partial object has been drawn.
    ctx.upstream.reply({ content: JSON.stringify(invoice), chunkSize: 8, pauseAfterChunks: [3] });
    const finished: unknown[] = [];
    const state = new ObjectStreamState(client, { workflow: "extract-invoice", schema: Invoice, onFinish: (r) => finished.push(r.object) });
    const snapshots: ReturnType<typeof state.getSnapshot>[] = [];
    let released = false;
    const unsubscribe = state.subscribe(() => {
      snapshots.push(state.getSnapshot());
      if (!released && state.getSnapshot().object !== undefined) {
        released = true;
        void waitUntil(async () => (await (await fetch(`${ctx.upstream.url}/__paused`)).json()).paused === 1, "the model to pause").then(() => fetch(`${ctx.upstream.url}/__release`, { method: "POST" }));
      }
    });
    await state.submit("Invoice INV-42");
    expect(snapshots[0]).toMatchObject({ isLoading: true, object: undefined });
    expect(snapshots.some((s) => s.isLoading && s.object !== undefined && s.object.lines === undefined)).toBe(true);
    expect(state.getSnapshot()).toMatchObject({ isLoading: false, error: undefined, object: invoice, metadata: { runId: expect.stringMatching(/^run_/) } });
    expect(finished).toEqual([invoice]);
    unsubscribe();

    ctx.upstream.reply({ content: JSON.stringify(invoice), chunkSize: 4, holdAfterChunks: 3 });
    const running = state.submit("again");
    await waitUntil(() => state.getSnapshot().object !== undefined, "a partial object");
    const runId = state.getSnapshot().runId!;
    state.stop();
    await running;
    expect(state.getSnapshot()).toMatchObject({ isLoading: false, error: undefined });
    await waitUntil(async () => (await runOf(runId)).status === "cancelled", "the run to be cancelled");

    await state.submit({ input: "x", contexts: ["no-such-context"] });
    expect(state.getSnapshot().error).toBeInstanceOf(GenserveNotFoundError);
  });
});

describe("the AI SDK provider", () => {
  const genserve = () => createGenserve({ baseURL: ctx.server.url, apiKey: caller.key, callback: callback() });

  it("generateObject runs the workflow and reports the run in providerMetadata", async () => {
    ctx.upstream.reply({ content: JSON.stringify(invoice), usage: { prompt_tokens: 30, completion_tokens: 12 } });
    const result = await generateObject({ model: genserve()("extract-invoice"), schema: Invoice, prompt: "Invoice INV-42" });
    expect(result.object).toEqual(invoice);
    expect(result.usage).toMatchObject({ inputTokens: 30, outputTokens: 12 });
    const meta = result.providerMetadata?.genserve as { runId: string; cost: string };
    expect(meta.runId).toMatch(/^run_/);
    expect(Number(meta.cost)).toBeGreaterThan(0);
    expect(await runOf(meta.runId)).toMatchObject({ status: "succeeded", operation: "generate.object", input: "Invoice INV-42" });
  });

  it("streamObject streams partial objects from a genserve stream", async () => {
    // The model pauses mid-object until the first partial has been seen.
    ctx.upstream.reply({ content: JSON.stringify(invoice), chunkSize: 6, pauseAfterChunks: [4] });
    const result = streamObject({ model: genserve()("extract-invoice"), schema: Invoice, prompt: "Invoice INV-42" });
    const partials: unknown[] = [];
    for await (const partial of result.partialObjectStream) {
      partials.push(partial);
      if (partials.length === 1) {
        await waitUntil(async () => (await (await fetch(`${ctx.upstream.url}/__paused`)).json()).paused === 1, "the model to pause");
        await fetch(`${ctx.upstream.url}/__release`, { method: "POST" });
      }
    }
    expect(partials.length).toBeGreaterThanOrEqual(2);
    expect(partials[0]).not.toEqual(invoice);
    expect(partials.at(-1)).toEqual(invoice);
    expect(await result.object).toEqual(invoice);
    const meta = (await result.providerMetadata)?.genserve as { runId: string };
    expect(await runOf(meta.runId)).toMatchObject({ status: "succeeded", operation: "stream.object" });
  });

  it("generateText and streamText run text runs (the callback the API requires comes from the provider's settings)", async () => {
    ctx.upstream.reply({ content: "The answer" });
    const result = await generateText({ model: genserve()("no-retry"), system: "Be brief.", prompt: "Question?" });
    expect(result.text).toBe("The answer");
    const runId = (result.providerMetadata?.genserve as { runId: string }).runId;
    expect(await runOf(runId)).toMatchObject({ operation: "generate.text", input: "System: Be brief.\n\nUser: Question?" });

    ctx.upstream.reply({ content: "Streamed answer" });
    const streamed = streamText({ model: genserve()("no-retry"), prompt: "Question?" });
    let text = "";
    for await (const delta of streamed.textStream) text += delta;
    expect(text).toBe("Streamed answer");
  });

  it("a genserve error reaches the AI SDK caller typed", async () => {
    await expect(generateText({ model: genserve()("nope"), prompt: "x", maxRetries: 0 })).rejects.toBeInstanceOf(GenserveNotFoundError);
    const noCallback = createGenserve({ baseURL: ctx.server.url, apiKey: caller.key })("no-retry");
    await expect(generateText({ model: noCallback, prompt: "x", maxRetries: 0 })).rejects.toBeInstanceOf(GenserveValidationError);
  });
});
