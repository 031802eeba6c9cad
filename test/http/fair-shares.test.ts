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
    // The flood's first run is held at the model (the one worker busy) until everything is queued.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    ctx.upstream.respondWith((body) => (JSON.stringify(body.messages).includes("flood 0") ? { waitFor: held } : undefined));
    const inputs = () => ctx.upstream.requests.map((r) => JSON.stringify(r.body.messages).match(/flood \d|not a flood/)?.[0]);
    const first = await queue(flood, "flood 0");
    expect(first.status).toBe(202);
    await waitUntil(() => inputs().includes("flood 0"), "the flood's first run to reach the model");
    const accepted = [first];
    for (let i = 1; i <= 5; i++) accepted.push(await queue(flood, `flood ${i}`));
    expect(accepted.map((r) => r.status)).toEqual([202, 202, 202, 202, 202, 202]);
    // Five queued (limits.asyncQueuedPerKey) besides the one running: the sixth is refused.
    const refused = await queue(flood, "flood 6");
    expect(refused.status).toBe(429);
    expect(refused.json).toMatchObject({ code: "run_queue_full", status: 429 });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);

    const mine = await queue(other, "not a flood");
    expect(mine.status).toBe(202);
    release();
    await waitUntil(async () => (await Promise.all([...accepted, mine].map((r) => statusOf(r === mine ? other : flood, r.json.runId)))).every((s) => s === "succeeded"), "every run to finish");
    // One worker: oldest first, the other key's run would have waited behind the five flood runs queued before it.
    expect(inputs()).toEqual(["flood 0", "not a flood", "flood 1", "flood 2", "flood 3", "flood 4", "flood 5"]);
  });
});
