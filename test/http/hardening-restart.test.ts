import Database from "better-sqlite3";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { testConfig } from "../helpers/config";
import { startFakeUpstream, type FakeUpstream } from "../helpers/fake-upstream";
import { get, post, startGenserve, tempDir, writeConfig } from "../helpers/genserve";
import { startReceiver, waitUntil } from "../helpers/receiver";

// What survives a crash or a stop: the outbox must never wedge the server, interrupted runs must
// end exactly like live failures (callback included), and shutdown must stop delivering before
// storage closes. Each test runs its own server on its own data directory.
const CONFIG = `
network:
  allowPrivate: true
limits:
  callbackRetryScheduleMs: [60000, 60000]
  callbackTimeoutMs: 3000
  callbackPollMs: 100
`;

let upstream: FakeUpstream;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  upstream = await startFakeUpstream();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await upstream?.close();
});
beforeEach(() => {
  upstream.reset();
  receiver.reset();
});

const textRun = (server: { url: string }, key: string, callback: Record<string, unknown>) =>
  post(server, "/api/v1/generate/text", { input: "x", type: "event", workflowSlug: "no-retry", callback }, key);

describe("the outbox after a restart", () => {
  it("records a failed attempt for an event that cannot be sent, keeps serving, and retries it only on the schedule", async () => {
    const dir = tempDir();
    const configFile = writeConfig(dir, testConfig(upstream.url, CONFIG));
    const first = await startGenserve({ configFile, dataDir: `${dir}/data` });
    const key = first.adminKey!;
    const res = await textRun(first, key, { url: receiver.url });
    expect(res.status).toBe(200);
    await waitUntil(() => receiver.received.length === 1, "the first delivery");
    await first.stop();

    // An event as an older version stored it: a header value Node's HTTP client throws on.
    const db = new Database(path.join(dir, "data", "genserve.sqlite"));
    db.prepare("UPDATE events SET headers = ?, status = 'pending', next_attempt_at = ? WHERE run_id = ?").run(
      JSON.stringify({ "X-Customer": "中文" }),
      new Date().toISOString(),
      res.json.metadata.runId,
    );
    db.close();

    const second = await startGenserve({ configFile, dataDir: `${dir}/data` });
    try {
      const run = async () => (await get(second, `/api/v1/runs/${res.json.metadata.runId}`, key)).json;
      await waitUntil(async () => (await run()).deliveries.log.length === 2, "the failed attempt to be recorded");
      // The server answers at once (the loop used to spin without yielding, then die of heap exhaustion).
      for (let i = 0; i < 5; i++) {
        const started = Date.now();
        expect((await get(second, "/healthz", null)).status).toBe(200);
        expect(Date.now() - started).toBeLessThan(5_000);
        await new Promise((r) => setTimeout(r, 200));
      }
      const after = await run();
      expect(after.deliveries.log).toHaveLength(2); // not retried before its next attempt is due
      expect(after.deliveries.log[1]).toMatchObject({ statusCode: null, error: expect.stringMatching(/could not send/), nextAttemptAt: expect.any(String) });
      expect(after.deliveries.status).toBe("pending");
      expect(receiver.received).toHaveLength(1);
    } finally {
      await second.stop();
    }
  });
});

describe("runs cut by a crash", () => {
  it("fail as interrupted on the next start with their run.failed callback, like a live failure", async () => {
    const dir = tempDir();
    const configFile = writeConfig(dir, testConfig(upstream.url, CONFIG));
    const first = await startGenserve({ configFile, dataDir: `${dir}/data` });
    const key = first.adminKey!;
    upstream.reply({ delayMs: 20_000 });
    const inFlight = textRun(first, key, { url: receiver.url, customProperties: { order: 7 } }).catch(() => null);
    await waitUntil(() => upstream.requests.length === 1, "the run to reach the model");
    const runId = (await get(first, "/api/v1/runs?status=running", key)).json.runs[0].id as string;
    await first.stop("SIGKILL");
    await inFlight;

    const second = await startGenserve({ configFile, dataDir: `${dir}/data` });
    try {
      await waitUntil(() => receiver.received.length === 1, "the run.failed event");
      const event = JSON.parse(receiver.received[0]!.body);
      expect(event).toMatchObject({ type: "run.failed", data: { runId, customProperties: { order: 7 }, error: { code: "interrupted", runId } } });
      const run = (await get(second, `/api/v1/runs/${runId}`, key)).json;
      expect(run).toMatchObject({ status: "failed", error: { code: "interrupted" } });
      expect(run.deliveries.status).toBe("delivered");
    } finally {
      await second.stop();
    }
  });
});

describe("shutdown", () => {
  it("stops the delivery loop before storage closes, even when runs' grace is shorter than a delivery", async () => {
    const dir = tempDir();
    const configFile = writeConfig(dir, testConfig(upstream.url, `${CONFIG}  shutdownGraceMs: 100\n`));
    const server = await startGenserve({ configFile, dataDir: `${dir}/data` });
    receiver.script({ delayMs: 1_500 });
    const res = await textRun(server, server.adminKey!, { url: receiver.url });
    expect(res.status).toBe(200);
    await waitUntil(() => receiver.received.length === 1, "the delivery to start");
    // A client halfway through sending a request keeps the process up after storage closes, long
    // enough for a delivery that outlived storage to fail on it.
    const lingering = net.connect(Number(new URL(server.url).port), "127.0.0.1");
    lingering.on("error", () => undefined);
    lingering.write("POST /api/v1/generate/text HTTP/1.1\r\nHost: x\r\n");
    await new Promise((r) => setTimeout(r, 100));
    expect(await server.stop("SIGTERM")).toBe(0);
    lingering.destroy();
    expect(server.output()).not.toMatch(/database connection is not open|delivery loop failed|could not record|unhandled rejection/);
    // The delivery that was in flight was recorded before storage closed.
    const after = await startGenserve({ configFile, dataDir: `${dir}/data` });
    try {
      const run = (await get(after, `/api/v1/runs/${res.json.metadata.runId}`, server.adminKey!)).json;
      expect(run.deliveries.log[0]).toMatchObject({ statusCode: 200 });
    } finally {
      await after.stop();
    }
  });
});

describe("a crash during heavy writes", () => {
  it("loses no run that answered 200: SIGKILL while runs, their callbacks and inbox deliveries are written, then a restart on a sound file", async () => {
    const dir = tempDir();
    const configFile = writeConfig(dir, testConfig(upstream.url, CONFIG));
    const first = await startGenserve({ configFile, dataDir: `${dir}/data` });
    const key = first.adminKey!;
    // Each run's callback goes to the server's own inbox: every run writes its admission, its end
    // with its event, the delivery and the inbox's delivery, from 16 clients at once.
    const inbox = (await post(first, "/api/v1/inbox", {}, key)).json as { url: string };
    const answered = new Set<string>();
    let killing = false;
    const client = async (n: number) => {
      for (let i = 0; !killing; i++) {
        const res = await textRun(first, key, { url: inbox.url, customProperties: { n, i } }).catch(() => null);
        if (res?.status === 200) answered.add(res.json.metadata.runId as string);
      }
    };
    const clients = Array.from({ length: 16 }, (_, n) => client(n));
    await waitUntil(() => answered.size >= 300, "300 answered runs", 120_000);
    killing = true;
    await first.stop("SIGKILL");
    await Promise.all(clients);

    const db = new Database(path.join(dir, "data", "genserve.sqlite"));
    try {
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    } finally {
      db.close();
    }
    const second = await startGenserve({ configFile, dataDir: `${dir}/data` });
    try {
      const stored = new Map<string, string>();
      for (let cursor: string | null = ""; cursor !== null; ) {
        const page: { runs: { id: string; status: string }[]; nextCursor: string | null } = (await get(second, `/api/v1/runs?limit=100${cursor ? `&cursor=${cursor}` : ""}`, key)).json;
        for (const run of page.runs) stored.set(run.id, run.status);
        cursor = page.nextCursor;
      }
      const lost = [...answered].filter((id) => stored.get(id) !== "succeeded");
      expect(lost).toEqual([]);
      // The runs the crash cut were ended at the restart; none is left running.
      expect([...stored.values()].filter((s) => s === "running" || s === "queued")).toEqual([]);
    } finally {
      await second.stop();
    }
  }, 240_000);
});
