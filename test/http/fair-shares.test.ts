import { describe, expect, it } from "vitest";
import { CALLBACK } from "../helpers/config";
import { cli, get, post } from "../helpers/genserve";
import { waitUntil } from "../helpers/receiver";
import { useGenserve } from "../helpers/suite";

// Fair sharing under abuse (issue 31): one key's flood of asynchronous runs neither fills the
// queue without end nor keeps another key's run waiting behind all of it. (Evaluations' turns are
// in evaluation-fairness.test.ts, a local model's lanes in lib/models/lanes.test.ts.)
const ctx = useGenserve(`
limits:
  asyncConcurrency: 1
  asyncQueuedPerKey: 5
`);

const queue = (key: string, input: string) => post(ctx.server, "/api/v1/generate/text", { input, type: "event", workflowSlug: "no-retry", callback: CALLBACK }, key, { Prefer: "respond-async" });
const statusOf = async (key: string, runId: string) => (await get(ctx.server, `/api/v1/runs/${runId}`, key)).json.status as string;

describe("asynchronous runs", () => {
  it("bound each key's queue (429 run_queue_full), and take keys in turns: another key's run goes before the flood's rest", async () => {
    const flood = (JSON.parse(await cli(["keys", "create", "--name", "flood", "--json"], { dataDir: ctx.server.dataDir })) as { key: string }).key;
    const other = (JSON.parse(await cli(["keys", "create", "--name", "other", "--json"], { dataDir: ctx.server.dataDir })) as { key: string }).key;
    ctx.upstream.respondWith((body) => (JSON.stringify(body.messages).includes("flood") ? { delayMs: 400 } : undefined));
    const accepted: Awaited<ReturnType<typeof queue>>[] = [];
    for (let i = 0; i < 5; i++) accepted.push(await queue(flood, `flood ${i}`));
    expect(accepted.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    // The first may have started already; the key's queue holds at most 5.
    let refused = await queue(flood, "flood 5");
    if (refused.status === 202) refused = await queue(flood, "flood 6");
    expect(refused.status).toBe(429);
    expect(refused.json).toMatchObject({ code: "run_queue_full", status: 429 });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);

    const mine = await queue(other, "not a flood");
    expect(mine.status).toBe(202);
    await waitUntil(async () => (await statusOf(other, mine.json.runId)) === "succeeded", "the other key's run to finish");
    // One worker: had runs been taken oldest first, every flood run would have gone before it.
    const still = await Promise.all(accepted.map((r) => statusOf(flood, r.json.runId)));
    expect(still.filter((s) => s === "queued").length).toBeGreaterThanOrEqual(2);
    await waitUntil(async () => (await Promise.all(accepted.map((r) => statusOf(flood, r.json.runId)))).every((s) => s === "succeeded"), "the flood to drain");
  });
});
