import { createParser, type EventSourceMessage } from "eventsource-parser";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CALLBACK, INVOICE_SCHEMA } from "../helpers/config";
import { createKey, get, post } from "../helpers/genserve";
import { startReceiver, waitUntil } from "../helpers/receiver";
import { streamRequest } from "../helpers/streams";
import { useGenserve } from "../helpers/suite";

// Cancelling a synchronous run (the playground's Cancel and Esc abort the request): with
// `?cancelOnDisconnect=true` the server stops the run at once, aborts the model call and records
// the run cancelled; without it the run completes as before (issue 32, part 2). And cancelling any
// run from anywhere: POST /api/v1/runs/{id}/cancel.

const ctx = useGenserve(`
network:
  allowPrivate: true
limits:
  asyncConcurrency: 1
  callbackPollMs: 100
`);

const EVENT = { type: "event", callback: CALLBACK };
const bodies = {
  "generate/object": { ...EVENT, input: "Invoice INV-7", workflowSlug: "extract-invoice", schema: INVOICE_SCHEMA },
  "generate/text": { ...EVENT, input: "Say hello", workflowSlug: "extract-invoice" },
};

/** The newest run of the admin key (the aborted request never saw its id). */
async function newestRun(): Promise<{ id: string; status: string } | undefined> {
  const { json } = await get(ctx.server, "/api/v1/runs?limit=1", ctx.key);
  return json.runs[0];
}

/** Starts a run whose model call hangs, and aborts the request once the model was called. */
async function abandon(path: keyof typeof bodies, query: string): Promise<{ runId: string; release: () => void; abortedAt: number }> {
  let release!: () => void;
  ctx.upstream.reply({ waitFor: new Promise<void>((resolve) => (release = resolve)), content: JSON.stringify({ number: "INV-7", total: 1, currency: "EUR" }) });
  const before = (await newestRun())?.id;
  const controller = new AbortController();
  const pending = fetch(`${ctx.server.url}/api/v1/${path}${query}`, {
    method: "POST",
    headers: { "content-type": "application/json", "api-key": ctx.key },
    body: JSON.stringify(bodies[path]),
    signal: controller.signal,
  }).catch((error: unknown) => error);
  // A request refused at once (a 4xx) would never call the model: say so rather than time out.
  void pending.then(async (r) => r instanceof Response && console.error(`answered ${r.status}: ${await r.text()}`));
  await waitUntil(() => ctx.upstream.requests.length === 1, "the model to be called");
  const run = await newestRun();
  expect(run?.id).not.toBe(before);
  expect(run?.status).toBe("running");
  controller.abort();
  const abortedAt = Date.now();
  expect(await pending).toBeInstanceOf(Error);
  return { runId: run!.id, release, abortedAt };
}

describe("cancelOnDisconnect on the generate operations", () => {
  for (const path of Object.keys(bodies) as (keyof typeof bodies)[]) {
    it(`${path}: the run ends cancelled at once, its model call aborted`, async () => {
      const { runId, release, abortedAt } = await abandon(path, "?cancelOnDisconnect=true");
      try {
        // The workflow's deadline is 60 s: without the cancel the run would stay running until then.
        await waitUntil(async () => (await get(ctx.server, `/api/v1/runs/${runId}`, ctx.key)).json.status !== "running", "the run to end", 20_000);
        const elapsed = Date.now() - abortedAt;
        const { json } = await get(ctx.server, `/api/v1/runs/${runId}`, ctx.key);
        expect(json.status).toBe("cancelled");
        expect(json.error.code).toBe("cancelled");
        await waitUntil(() => ctx.upstream.requests[0]!.closedEarly, "the model call to be aborted", 20_000);
        // Within a second on an idle machine; the bound allows a loaded one.
        expect(elapsed).toBeLessThan(10_000);
      } finally {
        release();
      }
    });
  }

  it("without it, a run whose caller went away still completes and is recorded", async () => {
    const { runId, release } = await abandon("generate/object", "");
    release();
    await waitUntil(async () => (await get(ctx.server, `/api/v1/runs/${runId}`, ctx.key)).json.status !== "running", "the run to end");
    expect((await get(ctx.server, `/api/v1/runs/${runId}`, ctx.key)).json.status).toBe("succeeded");
  });
});

/** Reads an SSE response as it arrives: the events so far, and when it ended. */
function follow(response: Response): { events: EventSourceMessage[]; text: () => string; ended: Promise<void> } {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e) });
  const decoder = new TextDecoder();
  const ended = (async () => {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
  })();
  const text = () => events.filter((e) => e.event === undefined || e.event === "message").map((e) => (JSON.parse(e.data) as { object: { text: string } }).object.text).join("");
  return { events, text, ended };
}

describe("POST /api/v1/runs/{id}/cancel", () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let owner: { id: string; key: string };
  let bystander: { id: string; key: string };
  beforeAll(async () => {
    receiver = await startReceiver();
    [owner, bystander] = await Promise.all([createKey("canceller", { dataDir: ctx.server.dataDir }), createKey("bystander", { dataDir: ctx.server.dataDir })]);
  });
  afterAll(async () => receiver?.close());
  beforeEach(() => receiver.reset());

  const cancel = (runId: string, key: string) => post(ctx.server, `/api/v1/runs/${runId}/cancel`, "", key);
  const runOf = async (runId: string, key = owner.key) => (await get(ctx.server, `/api/v1/runs/${runId}`, key)).json;
  const streamBody = { input: "Invoice INV-9", workflowSlug: "no-retry", schema: INVOICE_SCHEMA };
  const INVOICE = JSON.stringify({ number: "INV-9", total: 9, currency: "EUR" });

  it("stops a live stream from a second client: the stream and a follower end cancelled, the output so far and its tokens kept", async () => {
    ctx.upstream.reply({ content: INVOICE, chunkSize: 4, holdAfterChunks: 3 });
    const response = await streamRequest(ctx.server.url, owner.key, streamBody);
    expect(response.status).toBe(200);
    const runId = response.headers.get("x-run-id")!;
    const caller = follow(response);
    // A second client following the same run (as a reattached browser does).
    const follower = follow(await fetch(`${ctx.server.url}/api/v1/runs/${runId}/stream`, { headers: { "api-key": owner.key } }));
    // The model stalls after three chunks (12 characters): wait until both clients have them.
    await waitUntil(() => caller.text().length === 12 && follower.text().length === 12, "the first three chunks");
    // Another key may not: a 404, exactly like a run it cannot see; the run goes on.
    const refused = await cancel(runId, bystander.key);
    expect(refused.status).toBe(404);
    expect(refused.json.code).toBe("run_not_found");
    expect((await runOf(runId)).status).toBe("running");
    const startedAt = Date.now();
    const res = await cancel(runId, owner.key);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id: runId, status: "cancelled", error: { code: "cancelled", lastOutput: INVOICE.slice(0, 12) } });
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    await Promise.all([caller.ended, follower.ended]);
    for (const { events } of [caller, follower]) {
      const last = events.at(-1)!;
      expect(last.event).toBe("error");
      expect(JSON.parse(last.data)).toMatchObject({ code: "cancelled", runId, lastOutput: INVOICE.slice(0, 12) });
    }
    await waitUntil(() => ctx.upstream.requests[0]!.closedEarly, "the model call to be aborted");
    const run = await runOf(runId);
    expect(run).toMatchObject({ status: "cancelled", error: { code: "cancelled", lastOutput: INVOICE.slice(0, 12) } });
    // The tokens the cut-short call used are recorded (estimated: the provider reports none then).
    expect(run.metadata.outputTokens).toBeGreaterThan(0);
    expect(run.metadata.inputTokens).toBeGreaterThan(0);
    // Cancelling again answers the same; a finished run that was not cancelled is a 409.
    const again = await cancel(runId, owner.key);
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ id: runId, status: "cancelled", error: { code: "cancelled" } });
  });

  it("cancels a running asynchronous run (its model call aborted, run.cancelled sent) and a queued one at once; an admin key may cancel another key's run", async () => {
    let release!: () => void;
    ctx.upstream.reply({ waitFor: new Promise<void>((resolve) => (release = resolve)), content: INVOICE });
    try {
      const callback = { url: receiver.url };
      const start = () => post(ctx.server, "/api/v1/generate/object", { ...streamBody, type: "event", callback }, owner.key, { prefer: "respond-async" });
      const running = await start();
      expect(running.status).toBe(202);
      const runningId = running.json.runId;
      await waitUntil(() => ctx.upstream.requests.length === 1, "the model to be called");
      // asyncConcurrency is 1: the second waits in the queue.
      const queued = await start();
      const queuedId = queued.json.runId;
      expect((await runOf(queuedId)).status).toBe("queued");

      const q = await cancel(queuedId, owner.key);
      expect(q.status).toBe(200);
      expect(q.json).toMatchObject({ id: queuedId, status: "cancelled", error: { code: "cancelled" } });
      expect(ctx.upstream.requests).toHaveLength(1);

      // The admin key (not the run's) may cancel it.
      const r = await cancel(runningId, ctx.key);
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ id: runningId, status: "cancelled", error: { code: "cancelled" } });
      await waitUntil(() => ctx.upstream.requests[0]!.closedEarly, "the model call to be aborted");

      await waitUntil(() => receiver.received.length === 2, "both run.cancelled events");
      const events = receiver.received.map((e) => JSON.parse(e.body) as { type: string; data: { runId: string; error: { code: string } } });
      expect(events.map((e) => [e.type, e.data.runId, e.data.error.code]).sort()).toEqual(
        [
          ["run.cancelled", runningId, "cancelled"],
          ["run.cancelled", queuedId, "cancelled"],
        ].sort(),
      );
      // Neither is started again, and the next run still gets the slot.
      ctx.upstream.reply({ content: INVOICE });
      const next = await start();
      await waitUntil(async () => (await runOf(next.json.runId)).status === "succeeded", "the next run to succeed");
      expect((await runOf(queuedId)).status).toBe("cancelled");
      // The runs list filters on it: both cancelled runs, and not the one that succeeded.
      const listed = await get(ctx.server, "/api/v1/runs?status=cancelled&limit=100", ctx.key);
      expect(listed.status).toBe(200);
      const ids = (listed.json.runs as { id: string; status: string }[]).map((r) => r.id);
      expect(ids).toEqual(expect.arrayContaining([runningId, queuedId]));
      expect(ids).not.toContain(next.json.runId);
      expect((listed.json.runs as { status: string }[]).every((r) => r.status === "cancelled")).toBe(true);
    } finally {
      release();
    }
  });

  it("is a 409 run_finished for a run that ended otherwise, and a 404 for a run that does not exist", async () => {
    ctx.upstream.reply({ content: INVOICE });
    const done = await post(ctx.server, "/api/v1/generate/object", { ...streamBody, type: "event", callback: { url: receiver.url } }, owner.key);
    expect(done.status).toBe(200);
    const res = await cancel(done.json.metadata.runId, owner.key);
    expect(res.status).toBe(409);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.json).toMatchObject({ code: "run_finished", status: 409 });
    expect((await runOf(done.json.metadata.runId)).status).toBe("succeeded");
    expect((await cancel("run_01NOSUCHRUN0000000000000", owner.key)).status).toBe(404);
  });
});
