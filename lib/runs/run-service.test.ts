import { afterEach, describe, expect, it } from "vitest";
import { GenserveError, isGenserveError } from "../errors";
import { inProcess, type InProcess } from "../../test/helpers/in-process";
import { RecordingModel } from "../../test/helpers/mock-model";
import { BOUNDS } from "../store/contract-pages";
import type { StreamEvent } from "./stream-hub";

// The run service in-process, through every stage, with a recording mock model: no HTTP, no build.

const SCHEMA = {
  type: "object",
  properties: { number: { type: "string" }, total: { type: "number" }, currency: { enum: ["EUR", "USD"] } },
  required: ["number", "total", "currency"],
  additionalProperties: false,
};
const VALID = JSON.stringify({ number: "INV-1", total: 10, currency: "EUR" });
const CALLBACK = { url: "https://example.com/hook", customProperties: { ticket: 1 } };

let env: InProcess | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});
const start = async (model: RecordingModel) => (env = await inProcess(model));
const failure = async (promise: Promise<unknown>) => {
  const error = await promise.then(() => null, (e: unknown) => e);
  if (!isGenserveError(error)) throw new Error(`expected a GenserveError, got ${String(error)}`);
  return error;
};
const events = async (hub: InProcess["hub"], runId: string) => {
  const seen: StreamEvent[] = [];
  for await (const event of hub.follow(runId, 0, new AbortController().signal)) seen.push(event);
  return seen;
};

describe("RunService in-process", () => {
  it("generates an object: stored with tokens, cost and decoding, its callback event queued in the same step", async () => {
    const model = new RecordingModel().reply({ text: VALID, usage: { inputTokens: 100, outputTokens: 50 } });
    const { runs, store, principal } = await start(model);
    const result = await runs.generateObject(principal, { input: "Invoice 1", workflowSlug: "extract", schema: SCHEMA, callback: CALLBACK });
    expect(result.object).toEqual(JSON.parse(VALID));
    expect(result.metadata).toMatchObject({ runId: result.runId, cost: "0.0002", model: { name: "mock-1", tag: "mock" }, inputTokens: 100, outputTokens: 50 });
    const run = await store.runs.get(result.runId);
    expect(run).toMatchObject({ status: "succeeded", attempts: 1, decoding: "provider", output: JSON.parse(VALID), workflowVersion: "config" });
    const [event] = await store.events.due(new Date(Date.now() + 1_000).toISOString(), 10);
    expect(JSON.parse(event!.payload)).toMatchObject({ type: "run.succeeded", data: { runId: result.runId, customProperties: { ticket: 1 } } });
    // The model was asked for the schema natively and given the workflow's instructions.
    expect(model.calls[0]!.json?.schema).toEqual(SCHEMA);
    expect(model.calls[0]!.system).toContain("Extract the fields.");
  });

  it("retries an invalid output with the errors fed back, and never returns an invalid value", async () => {
    const model = new RecordingModel().reply({ text: '{"number": 1}' }, { text: VALID });
    const { runs, store, principal } = await start(model);
    const result = await runs.generateObject(principal, { input: "x", workflowSlug: "extract", schema: SCHEMA, callback: CALLBACK });
    expect(model.calls).toHaveLength(2);
    const feedback = JSON.stringify(model.calls[1]!.messages.slice(1));
    expect(feedback).toContain('{\\"number\\": 1}');
    expect(feedback).toMatch(/\/number.*must be string/);
    expect((await store.runs.get(result.runId))!.attempts).toBe(2);

    const exhausted = new RecordingModel().reply({ text: "no" }, { text: "{}" }, { text: '{"number":"x"}' });
    await env!.close();
    const second = await start(exhausted);
    const error = await failure(second.runs.generateObject(second.principal, { input: "x", workflowSlug: "extract", schema: SCHEMA, callback: CALLBACK }));
    expect(error.code).toBe("output_invalid");
    expect(exhausted.calls).toHaveLength(3);
    const stored = await second.store.runs.get(error.runId!);
    expect(stored).toMatchObject({ status: "failed", attempts: 3, error: { code: "output_invalid" } });
    const [event] = await second.store.events.due(new Date(Date.now() + 1_000).toISOString(), 10);
    expect(JSON.parse(event!.payload)).toMatchObject({ type: "run.failed", data: { error: { code: "output_invalid" } } });
  });

  it("retries a transient provider failure within the budget, and fails at once on a permanent one", async () => {
    const transient = new GenserveError("model_error", { detail: "503", retryable: true, upstreamStatus: 503, retryAfterMs: 0 });
    const model = new RecordingModel().reply({ error: transient }, { text: "fine" });
    const { runs, principal } = await start(model);
    const text = await runs.generateText(principal, { input: "x", workflowSlug: "extract", callback: CALLBACK });
    expect(text.text).toBe("fine");
    expect(model.calls).toHaveLength(2);

    model.reply({ error: new GenserveError("model_error", { detail: "401", retryable: false, upstreamStatus: 401 }) });
    expect((await failure(runs.generateText(principal, { input: "x", workflowSlug: "extract", callback: CALLBACK }))).code).toBe("model_error");
    expect(model.calls).toHaveLength(3);
  });

  it("stops a streamed attempt as soon as a closed part can never validate, announces the retry, and ends with done", async () => {
    const model = new RecordingModel().reply(
      { chunks: ['{"number": "A", ', '"total": 1, ', '"currency": "GBP"', ', "more": "never sent"}'] },
      { chunks: [VALID.slice(0, 10), VALID.slice(10)] },
    );
    const { runs, hub, store, principal } = await start(model);
    const { runId } = await runs.streamObject(principal, { input: "x", workflowSlug: "extract", schema: SCHEMA });
    const seen = await events(hub, runId);
    expect(seen.map((e) => e.kind)).toEqual(["item", "item", "item", "restart", "item", "item", "done"]);
    expect(model.aborted[0]).toBe(true); // the doomed attempt's model call was stopped
    const done = seen.at(-1)!;
    expect(done.kind === "done" && done.payload.object).toEqual(JSON.parse(VALID));
    // The stopped attempt reported no usage: its prompt and the text it wrote are estimated, not left out.
    const stored = (await store.runs.get(runId))!;
    expect(stored.outputTokens).toBeGreaterThan(5);
    expect(stored.inputTokens).toBeGreaterThan(10);
  });

  it("checks every item of an array as it closes, not only the first (items share their subschema's lookup)", async () => {
    const listSchema = {
      type: "object",
      properties: { list: { type: "array", items: { type: "object", properties: { n: { type: "integer", minimum: 0 } }, required: ["n"] } }, "7": { type: "string" } },
      required: ["list"],
    };
    const model = new RecordingModel().reply(
      { chunks: ['{"7": "a", "list": [{"n": 1}, ', '{"n": 2}, ', '{"n": -3}', ', {"n": 4}]}'] },
      { chunks: ['{"list": [{"n": 1}]}'] },
    );
    const { runs, hub, principal } = await start(model);
    const { runId } = await runs.streamObject(principal, { input: "x", workflowSlug: "extract", schema: listSchema });
    const seen = await events(hub, runId);
    expect(seen.map((e) => e.kind)).toEqual(["item", "item", "item", "restart", "item", "done"]);
    expect(model.aborted[0]).toBe(true);
  });

  it("counts what a cancelled stream used (estimated when the provider could not report it), never nothing", async () => {
    const model = new RecordingModel().reply({ chunks: ['{"number": "A-1", ', '"total": 12, ', '"currency": "EUR"}'], delayMs: 150 });
    const { runs, store, principal } = await start(model);
    const { runId } = await runs.streamObject(principal, { input: "Invoice A-1", workflowSlug: "extract", schema: SCHEMA });
    await new Promise((r) => setTimeout(r, 400));
    runs.clientGone(runId, true);
    await runs.drain(5_000);
    const stored = (await store.runs.get(runId))!;
    expect(stored).toMatchObject({ status: "cancelled", error: { code: "cancelled" } });
    expect(stored.outputTokens).toBeGreaterThan(0);
    expect(stored.inputTokens).toBeGreaterThan(0);
    expect(Number(stored.cost)).toBeGreaterThan(0);
  });

  it("refuses what cannot succeed before any run exists", async () => {
    const { runs, store, principal } = await start(new RecordingModel());
    expect((await failure(runs.generateText(principal, { input: "x", workflowSlug: "nope", callback: CALLBACK }))).code).toBe("workflow_not_found");
    expect((await failure(runs.generateText(principal, { input: "x", workflowSlug: "extract", contextSlugs: ["missing"], callback: CALLBACK }))).code).toBe("context_not_found");
    expect((await failure(runs.streamObject(principal, { input: "x", threadId: "no-such-thread", schema: SCHEMA }))).code).toBe("thread_not_found");
    const privateCallback = await failure(runs.generateText(principal, { input: "x", workflowSlug: "extract", callback: { url: "http://10.0.0.1/hook" } }));
    expect(privateCallback.errors).toEqual([{ path: "/callback/url", message: expect.stringMatching(/private address/) }]);
    expect((await store.runs.list({ limit: 10 }, BOUNDS)).runs).toEqual([]);
  });

  it("fails a run past its workflow's deadline as model_timeout, recorded", async () => {
    const model = new RecordingModel().reply({ text: "late", delayMs: 5_000 });
    const { runs, store, principal } = await start(model);
    const error = await failure(runs.generateText(principal, { input: "x", workflowSlug: "hurried", callback: CALLBACK }));
    expect(error.code).toBe("model_timeout");
    expect(await store.runs.get(error.runId!)).toMatchObject({ status: "failed", error: { code: "model_timeout" } });
  });

  it("appends a successful thread run's exchange to the thread, and sends it as history next time", async () => {
    const model = new RecordingModel().reply({ text: VALID }, { text: VALID });
    const { runs, hub, store, principal } = await start(model);
    const first = await runs.streamObject(principal, { input: "first question", workflowSlug: "extract", threadId: "t1", schema: SCHEMA });
    await events(hub, first.runId);
    expect((await store.threads.history(principal.keyId, "t1", 10_000)).map((m) => m.content)).toEqual(["first question", VALID]);
    const second = await runs.streamObject(principal, { input: "second question", threadId: "t1", schema: SCHEMA });
    await events(hub, second.runId);
    expect(model.calls[1]!.messages.map((m) => m.content)).toEqual(["first question", VALID, "second question"]);
  });

  it("executes queued asynchronous runs, and recovers runs a crash left running", async () => {
    const model = new RecordingModel().reply({ text: "done" });
    const { runs, store, principal } = await start(model);
    const { runId } = await runs.startAsync(principal, "generate.text", { input: "x", workflowSlug: "extract", callback: CALLBACK });
    for (let i = 0; i < 100 && (await store.runs.get(runId))!.status !== "succeeded"; i++) await new Promise((r) => setTimeout(r, 20));
    expect((await store.runs.get(runId))!.status).toBe("succeeded");

    // A run stored as running by a process that is gone.
    await store.runs.insert({ id: "run_01J0000000000000000000000Z", operation: "generate.text", workflowSlug: "extract", keyId: principal.keyId, input: "x", schema: null, contextSlugs: [], attachments: [], callback: CALLBACK, modelTag: "mock", createdAt: new Date().toISOString() });
    // Not this process's run: it has no lease, so it is stranded.
    expect(await runs.reconcile()).toEqual({ failed: 1, requeued: 0 });
    expect(await store.runs.get("run_01J0000000000000000000000Z")).toMatchObject({ status: "failed", error: { code: "interrupted" } });
    const due = await store.events.due(new Date(Date.now() + 1_000).toISOString(), 10);
    expect(due.map((e) => JSON.parse(e.payload).type)).toContain("run.failed");
  });
});
