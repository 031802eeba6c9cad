import { describe, expect, it } from "vitest";
import { CALLBACK, INVOICE_SCHEMA } from "../helpers/config";
import { get } from "../helpers/genserve";
import { waitUntil } from "../helpers/receiver";
import { useGenserve } from "../helpers/suite";

// Cancelling a synchronous run (the playground's Cancel and Esc abort the request): with
// `?cancelOnDisconnect=true` the server stops the run at once, aborts the model call and records
// the run cancelled; without it the run completes as before (issue 32, part 2).

const ctx = useGenserve();

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
        expect(json.status).toBe("failed");
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
