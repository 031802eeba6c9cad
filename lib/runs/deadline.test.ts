import v8 from "node:v8";
import vm from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { isGenserveError } from "../errors";
import { IN_PROCESS_CONFIG, inProcess, type InProcess } from "../../test/helpers/in-process";
import { RecordingModel } from "../../test/helpers/mock-model";
import { childSignal, RunDeadline } from "./deadline";
import type { StreamEvent } from "./stream-hub";

// Issue 31: no run outlives its deadline, whatever the model does — even a call that never settles
// and never looks at its signal — and even after a garbage collection (on Node 20 a composite
// `AbortSignal.any([AbortSignal.timeout(ms)])` is collected and never fires once one ran).

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

const SCHEMA = { type: "object", properties: { a: { type: "string" } }, required: ["a"] };
let env: InProcess | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

/** Collects garbage a few times over while `promise` is pending, then returns what it settled to. */
async function settleWithGc<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  const settled = promise.then((value) => ({ value }), (error: unknown) => ({ error }));
  let done = false;
  void settled.then(() => (done = true));
  while (!done) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return settled;
}

describe("RunDeadline", () => {
  it("aborts its signal and rejects `expired` at the deadline, after garbage collections", async () => {
    const deadline = new RunDeadline(150);
    const { error } = await settleWithGc(deadline.expired);
    expect(isGenserveError(error) && error.code).toBe("model_timeout");
    expect(deadline.signal.aborted).toBe(true);
    deadline.dispose();
  });

  it("leaves behind work that never settles, and forwards a source's abort with its reason", async () => {
    const deadline = new RunDeadline(60_000, [undefined]);
    const source = new AbortController();
    const linked = new RunDeadline(60_000, [source.signal]);
    const racing = linked.race(() => new Promise<never>(() => undefined));
    source.abort(new Error("cancelled by the caller"));
    const { error } = await settleWithGc(racing);
    expect((error as Error).message).toBe("cancelled by the caller");
    deadline.dispose();
    linked.dispose();
  });

  it("dispose clears the timer and detaches from long-lived sources", async () => {
    const shutdown = new AbortController();
    const deadline = new RunDeadline(50, [shutdown.signal]);
    deadline.dispose();
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(deadline.signal.aborted).toBe(false);
    shutdown.abort(new Error("stop"));
    expect(deadline.signal.aborted).toBe(false);
  });

  it("childSignal follows its parent and can be aborted alone", () => {
    const parent = new AbortController();
    const alone = childSignal(parent.signal);
    alone.abort(new Error("doomed"));
    expect(parent.signal.aborted).toBe(false);
    const follows = childSignal(parent.signal);
    parent.abort(new Error("deadline"));
    expect((follows.signal.reason as Error).message).toBe("deadline");
  });
});

describe("a run whose model never answers", () => {
  const hangs = () => new RecordingModel().reply({ hang: true });

  it("generate/text ends at the deadline as model_timeout, recorded, its concurrency slot released", async () => {
    const model = hangs().reply({ text: "after" });
    env = await inProcess(model);
    const principal = { ...env.principal, limits: { ...env.principal.limits, concurrency: 1 } };
    const { error } = await settleWithGc(env.runs.generateText(principal, { input: "x", workflowSlug: "hurried" }));
    expect(isGenserveError(error) && error.code).toBe("model_timeout");
    const runId = isGenserveError(error) ? error.runId! : "";
    expect(await env.store.runs.get(runId)).toMatchObject({ status: "failed", error: { code: "model_timeout", status: 504 } });
    // The key's one concurrent run is free again: the next run is admitted and answered.
    expect((await env.runs.generateText(principal, { input: "y", workflowSlug: "hurried" })).text).toBe("after");
    expect(env.runs.activeRuns).toBe(0);
  });

  it("generate/object ends at the deadline as model_timeout", async () => {
    env = await inProcess(hangs());
    const { error } = await settleWithGc(env.runs.generateObject(env.principal, { input: "x", workflowSlug: "hurried", schema: SCHEMA }));
    expect(isGenserveError(error) && error.code).toBe("model_timeout");
  });

  it("stream/object ends with a model_timeout error event", async () => {
    env = await inProcess(hangs());
    const { runId } = await env.runs.streamObject(env.principal, { input: "x", workflowSlug: "hurried", schema: SCHEMA });
    const follow = async () => {
      const seen: StreamEvent[] = [];
      for await (const event of env!.hub.follow(runId, 0, new AbortController().signal)) seen.push(event);
      return seen;
    };
    const { value } = await settleWithGc(follow());
    expect(value!.at(-1)).toMatchObject({ kind: "error", problem: { code: "model_timeout", status: 504 } });
    expect(await env.store.runs.get(runId)).toMatchObject({ status: "failed" });
  });
});

describe("an attempt left behind at the deadline", () => {
  it("starts no retry: nothing more is reserved on the key's budget and the model is not called again", async () => {
    // The call ignores its abort and answers, invalid, after the deadline; the workflow has retries left.
    const model = new RecordingModel().reply({ deaf: true, delayMs: 600, text: "not json" }, { text: '{"a": "late"}' });
    env = await inProcess(model, IN_PROCESS_CONFIG.replace("  hurried:\n    model: mock\n    retries: 0", "  hurried:\n    model: mock\n    retries: 2"));
    const principal = { ...env.principal, limits: { ...env.principal.limits, budgetDailyNanos: 1_000_000_000 } };
    const { error } = await settleWithGc(env.runs.generateObject(principal, { input: "x", workflowSlug: "hurried", schema: SCHEMA }));
    expect(isGenserveError(error) && error.code).toBe("model_timeout");
    // Once the deaf call has answered (and a moment for what would follow it): no second call, nothing left reserved.
    while (model.aborted.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(model.calls).toHaveLength(1);
    const meters = await env.store.keys.meters(principal.keyId, [`daily:${new Date().toISOString().slice(0, 10)}`]);
    expect(meters.every((m) => m.reserved === 0)).toBe(true);
  });
});
