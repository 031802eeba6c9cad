import { createParser, type EventSourceMessage } from "eventsource-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INVOICE_SCHEMA, testConfig } from "../helpers/config";
import { startFakeUpstream, type FakeUpstream } from "../helpers/fake-upstream";
import { get, post, startGenserve, tempDir, writeConfig, type GenserveServer } from "../helpers/genserve";
import { freshDatabase, postgresAvailable, TEST_SECRETS_ENV } from "../helpers/postgres";
import { waitUntil } from "../helpers/receiver";
import { streamRequest } from "../helpers/streams";

// Cancelling a run through another replica than the one executing it (issue 32): two `genserve
// serve` processes on one fresh PostgreSQL database. The lease is long (heartbeat every 20 s), so
// a cancel noticed within seconds was announced (NOTIFY), not found by a heartbeat.
const available = await postgresAvailable();

const CONFIG = `
security:
  secretsKey:
    env: GENSERVE_TEST_SECRETS_KEY
limits:
  runLeaseMs: 60000
`;

describe.runIf(available)("cancel across replicas on one PostgreSQL database", () => {
  let upstream: FakeUpstream;
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let a: GenserveServer;
  let b: GenserveServer;
  let key: string;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    database = await freshDatabase();
    const configFile = writeConfig(tempDir(), testConfig(upstream.url, CONFIG));
    const replica = () => startGenserve({ configFile, dataDir: `${tempDir()}/data`, env: { DATABASE_URL: database.url, ...TEST_SECRETS_ENV } });
    a = await replica();
    b = await replica();
    key = a.adminKey!;
  });
  afterAll(async () => {
    await Promise.all([a, b].map((s) => s?.stop().catch(() => undefined)));
    await upstream?.close();
    await database?.drop();
  });

  it("a stream executing on A is stopped by a cancel sent to B, within seconds: A's client sees it end cancelled", async () => {
    const content = JSON.stringify({ number: "INV-3", total: 3, currency: "EUR" });
    upstream.reply({ content, chunkSize: 4, holdAfterChunks: 2 });
    const response = await streamRequest(a.url, key, { input: "Invoice INV-3", workflowSlug: "no-retry", schema: INVOICE_SCHEMA });
    expect(response.status).toBe(200);
    const runId = response.headers.get("x-run-id")!;
    const events: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (e) => events.push(e) });
    const decoder = new TextDecoder();
    const ended = (async () => {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
    })();
    const text = () => events.filter((e) => e.event === undefined).map((e) => (JSON.parse(e.data) as { object: { text: string } }).object.text).join("");
    await waitUntil(() => text().length === 8, "the first two chunks");

    const sentAt = Date.now();
    const res = await post(b, `/api/v1/runs/${runId}/cancel`, "", key);
    // B waits up to 2 s for A to record the end: 200 once it has, 202 on a machine too busy for that.
    expect([200, 202]).toContain(res.status);
    expect(res.json.id).toBe(runId);
    await waitUntil(async () => (await get(b, `/api/v1/runs/${runId}`, key)).json.status === "cancelled", "the run to end", 20_000);
    const noticedMs = Date.now() - sentAt;
    // Announced: well under A's heartbeat (20 s) even on a loaded machine (about 100 ms idle).
    expect(noticedMs).toBeLessThan(10_000);
    await ended;
    const last = events.at(-1)!;
    expect(last.event).toBe("error");
    expect(JSON.parse(last.data)).toMatchObject({ code: "cancelled", runId, lastOutput: content.slice(0, 8) });
    await waitUntil(() => upstream.requests[0]!.closedEarly, "A's model call to be aborted");
    const run = (await get(a, `/api/v1/runs/${runId}`, key)).json;
    expect(run).toMatchObject({ status: "cancelled", error: { code: "cancelled", lastOutput: content.slice(0, 8) } });
    expect(run.metadata.outputTokens).toBeGreaterThan(0);
    // Either replica answers a second cancel the same way.
    expect((await post(a, `/api/v1/runs/${runId}/cancel`, "", key)).status).toBe(200);
  });
});
