import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testConfig } from "../helpers/config";
import { startFakeUpstream, type FakeUpstream } from "../helpers/fake-upstream";
import { cli, get, post, startGenserve, tempDir, writeConfig } from "../helpers/genserve";
import { freshDatabase, postgresAvailable } from "../helpers/postgres";
import { startReceiver, waitUntil } from "../helpers/receiver";
import { readSse, streamRequest } from "../helpers/streams";

const SCHEMA = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };

// Moving an embedded SQLite data directory into PostgreSQL with `genserve export` / `genserve
// import`, as an operator who outgrew one process would: keys, runs, threads and callbacks that
// were still waiting to be delivered all come along.
const available = await postgresAvailable();

const CONFIG = `
network:
  allowPrivate: true
limits:
  callbackRetryScheduleMs: [1000, 1000, 1000]
  callbackPollMs: 100
`;

describe.runIf(available)("moving from SQLite to PostgreSQL", () => {
  let upstream: FakeUpstream;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
    receiver = await startReceiver();
    database = await freshDatabase();
  });
  afterAll(async () => {
    await receiver?.close();
    await upstream?.close();
    await database?.drop();
  });

  it("keeps keys, runs, threads and pending callbacks; the callbacks are delivered from PostgreSQL", async () => {
    const dir = tempDir();
    const configFile = writeConfig(dir, testConfig(upstream.url, CONFIG));
    const dataDir = path.join(dir, "data");
    const sqlite = await startGenserve({ configFile, dataDir });
    const key = sqlite.adminKey!;
    // A run whose callback receiver is down: it stays pending in the outbox.
    // Down for longer than this server lives, however slowly the machine runs it (the script is reset below).
    receiver.script(...Array.from({ length: 20 }, () => ({ status: 503 })));
    const pending = await post(sqlite, "/api/v1/generate/text", { input: "first", type: "event", workflowSlug: "no-retry", callback: { url: receiver.url } }, key);
    expect(pending.status).toBe(200);
    await waitUntil(() => receiver.received.length === 1, "the first (failed) delivery attempt");
    const threaded = await readSse(await streamRequest(sqlite.url, key, { input: "hello from the thread", workflowSlug: "no-retry", threadId: "support-7", schema: SCHEMA }));
    expect(threaded.events.at(-1)!.event).toBe("done");
    await sqlite.stop();
    const attemptsBefore = receiver.received.length;

    const file = path.join(dir, "export.jsonl");
    await cli(["export", "--out", file], { dataDir, configFile });
    const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ genserve: "export", format: 1, source: "sqlite" });
    expect(lines.filter((l) => l.table === "runs")).toHaveLength(2);

    // Signing secrets move sealed, as they are: the key moves with them (the SQLite store's key file, named in the configuration).
    const env = { DATABASE_URL: database.url };
    const movedConfig = writeConfig(tempDir(), testConfig(upstream.url, `${CONFIG}security:\n  secretsKey:\n    file: ${path.join(dataDir, "secrets.key")}\n`));
    await cli(["import", file], { dataDir: tempDir(), configFile: movedConfig, env });
    // An import never lands on data: a second one is refused and writes nothing.
    await expect(cli(["import", file], { dataDir: tempDir(), configFile: movedConfig, env })).rejects.toThrow(/already holds keys or runs/);
    // Without the key, PostgreSQL refuses to start, saying what to set.
    await expect(cli(["keys", "list"], { dataDir: tempDir(), configFile, env })).rejects.toThrow(/security\.secretsKey/);

    receiver.reset();
    const postgres = await startGenserve({ configFile: movedConfig, dataDir: path.join(tempDir(), "data"), env });
    try {
      expect(postgres.adminKey).toBeNull(); // the imported admin key is the admin key
      expect((await get(postgres, "/readyz", null)).json).toMatchObject({ storage: "postgres" });
      const run = (await get(postgres, `/api/v1/runs/${pending.json.metadata.runId}`, key)).json;
      expect(run).toMatchObject({ status: "succeeded", output: pending.json.text });
      // The attempts made from SQLite came along (the new server may already have made one more).
      expect(run.deliveries.log.slice(0, attemptsBefore).map((d: { statusCode: number }) => d.statusCode)).toEqual(Array(attemptsBefore).fill(503));
      // The pending callback goes out from the new store, with the same event id.
      await waitUntil(() => receiver.received.length >= 1, "the pending callback");
      const event = JSON.parse(receiver.received[0]!.body);
      expect(event.data.runId).toBe(pending.json.metadata.runId);
      await waitUntil(async () => (await get(postgres, `/api/v1/runs/${pending.json.metadata.runId}`, key)).json.deliveries.status === "delivered", "the delivery to be recorded");
      // The thread continues where it was.
      const next = await readSse(await streamRequest(postgres.url, key, { input: "again", threadId: "support-7", schema: SCHEMA }));
      expect(next.events.at(-1)!.event).toBe("done");
      const history = upstream.requests.at(-1)!.body.messages.map((m) => JSON.stringify(m.content));
      expect(history.join("\n")).toContain("hello from the thread");
    } finally {
      await postgres.stop();
    }
  });
});
