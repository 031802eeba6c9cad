import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { INVOICE_SCHEMA, testConfig } from "../helpers/config";
import { startFakeUpstream, type FakeReply, type FakeUpstream } from "../helpers/fake-upstream";
import { cli, createKey, get, post, startGenserve, tempDir, writeConfig, type GenserveServer } from "../helpers/genserve";
import { freshDatabase, POSTGRES_URL, postgresAvailable, TEST_SECRETS_ENV } from "../helpers/postgres";
import { startReceiver, waitUntil } from "../helpers/receiver";
import { readSse, streamRequest } from "../helpers/streams";
import { startTcpProxy } from "../helpers/tcp-proxy";

// genserve as several replicas on one PostgreSQL database, over real HTTP: each replica is a
// `genserve serve` process with a data directory of its own and DATABASE_URL pointing at the same
// fresh database. Leases are short so that reconciliation after a crash is quick to see.
const available = await postgresAvailable();

/** Reads SSE events until `count` have arrived, then drops the connection. */
async function readSome(response: Response, count: number): Promise<EventSourceMessage[]> {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e) });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  while (events.length < count) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.feed(decoder.decode(value, { stream: true }));
  }
  await reader.cancel();
  return events;
}

const CONFIG = `
# Replicas share the key that seals signing secrets (PostgreSQL needs one configured).
security:
  secretsKey:
    env: GENSERVE_TEST_SECRETS_KEY
network:
  allowPrivate: true
limits:
  # Short, so that reconciliation after a crash is quick to see — but long enough that a replica
  # starved of CPU (the suite run twice at once) still renews its leases in time.
  runLeaseMs: 6000
  callbackRetryScheduleMs: [200, 200, 200]
  callbackPollMs: 100
`;

describe.runIf(available)("replicas on one PostgreSQL database", () => {
  let upstream: FakeUpstream;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  /** Where the callbacks of runs whose callbacks a test does not check go. */
  let sinkReceiver: Awaited<ReturnType<typeof startReceiver>>;
  const sink = () => ({ url: sinkReceiver.url });
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let configFile: string;
  let a: GenserveServer;
  let b: GenserveServer;
  let key: string;
  const extra: GenserveServer[] = [];

  const replica = (url = database.url) => startGenserve({ configFile, dataDir: `${tempDir()}/data`, env: { DATABASE_URL: url, ...TEST_SECRETS_ENV } });

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    receiver = await startReceiver();
    sinkReceiver = await startReceiver();
    database = await freshDatabase();
    configFile = writeConfig(tempDir(), testConfig(upstream.url, CONFIG));
    // Two replicas starting together on an empty database: migrations run once, one admin key is made.
    [a, b] = await Promise.all([replica(), replica()]);
    const keys = [a.adminKey, b.adminKey].filter((k): k is string => k !== null);
    expect(keys).toHaveLength(1);
    key = keys[0]!;
  });
  afterAll(async () => {
    await Promise.all([a, b, ...extra].map((s) => s?.stop().catch(() => undefined)));
    await receiver?.close();
    await sinkReceiver?.close();
    await upstream?.close();
    await database?.drop();
  });
  beforeEach(() => {
    upstream.reset();
    receiver.reset();
  });

  it("share keys and runs: a key made on one replica works on the other, a run made on one is read on the other", async () => {
    const made = await createKey("team", { dataDir: tempDir(), configFile, env: { DATABASE_URL: database.url, ...TEST_SECRETS_ENV } });
    const res = await post(b, "/api/v1/generate/text", { input: "hello", type: "event", workflowSlug: "no-retry", callback: sink() }, made.key);
    expect(res.status).toBe(200);
    const run = await get(a, `/api/v1/runs/${res.json.metadata.runId}`, made.key);
    expect(run.json).toMatchObject({ status: "succeeded", operation: "generate.text" });
    expect((await get(a, "/readyz", null)).json).toMatchObject({ status: "ready", storage: "postgres" });
  });

  it("run one request per Idempotency-Key, however the same request is spread over replicas at once", async () => {
    upstream.reply({ delayMs: 300 });
    const body = { input: "once", type: "event", workflowSlug: "no-retry", callback: sink() };
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => post(i % 2 ? a : b, "/api/v1/generate/text", body, key, { "Idempotency-Key": "order-7" })),
    );
    const ok = responses.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((r) => r.json.metadata.runId)).size).toBe(1);
    for (const r of responses.filter((r) => r.status !== 200)) expect(r.json).toMatchObject({ code: "idempotency_in_progress" });
    expect(upstream.requests).toHaveLength(1);
    // Once done, every replica replays the same answer.
    const again = await post(a, "/api/v1/generate/text", body, key, { "Idempotency-Key": "order-7" });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json.metadata.runId).toBe(ok[0]!.json.metadata.runId);
  });

  it("execute each queued asynchronous run once and deliver each callback once, across replicas", async () => {
    const started = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        post(i % 2 ? a : b, "/api/v1/generate/text", { input: `job ${i}`, type: "event", workflowSlug: "no-retry", callback: { url: receiver.url } }, key, { Prefer: "respond-async" }),
      ),
    );
    expect(started.map((r) => r.status)).toEqual(Array(12).fill(202));
    await waitUntil(() => receiver.received.length >= 12, "12 callbacks");
    await new Promise((r) => setTimeout(r, 500));
    const delivered = receiver.received.map((r) => JSON.parse(r.body) as { id: string; data: { runId: string } });
    expect(delivered).toHaveLength(12);
    expect(new Set(delivered.map((e) => e.data.runId))).toEqual(new Set(started.map((r) => r.json.runId)));
    expect(upstream.requests).toHaveLength(12);
  });

  it("hold a key's budget across replicas: 50 concurrent runs against 10 runs' worth never spend more than the budget", async () => {
    // Each run costs 0.00045 USD (1000 prompt + 500 output tokens at 0.15 / 0.60 per million) and
    // reserves its worst case (the prompt estimate + 1024 output tokens, ~0.00063) while it runs.
    const made = JSON.parse(await cli(["keys", "create", "--name", "budgeted", "--budget-daily", "0.0045", "--json"], { dataDir: tempDir(), configFile, env: { DATABASE_URL: database.url, ...TEST_SECRETS_ENV } }));
    upstream.reply(...Array.from({ length: 50 }, () => ({ delayMs: 300, usage: { prompt_tokens: 1000, completion_tokens: 500 } })));
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => post(i % 2 ? a : b, "/api/v1/generate/text", { input: `order ${i}`, type: "event", workflowSlug: "extract-invoice", callback: sink() }, made.key)),
    );
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 402);
    expect(ok.length + refused.length, JSON.stringify(results.find((r) => r.status !== 200 && r.status !== 402)?.json)).toBe(50);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(refused[0]!.json).toMatchObject({ code: "budget_exceeded", budget: { period: "daily", limitUsd: "0.0045" } });
    // Refused runs never reached the model; what the admitted ones cost is what the key has spent.
    expect(upstream.requests).toHaveLength(ok.length);
    const spentNanos = ok.reduce((sum, r) => sum + Math.round(Number(r.json.metadata.cost) * 1e9), 0);
    expect(spentNanos).toBe(ok.length * 450_000);
    expect(spentNanos).toBeLessThanOrEqual(4_500_000);
    const quota = (await get(b, `/api/v1/keys/${made.id}`, key)).json.quotas.find((q: { policy: string }) => q.policy === "daily");
    expect(quota).toMatchObject({ used: String(spentNanos / 1e9), reserved: "0" });

    // Each replica counts its own admissions and refusals, and shows its connection pool.
    const scrape = async (server: GenserveServer) => (await fetch(`${server.url}/metrics`, { headers: { "api-key": key } })).text();
    const count = (text: string, pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
    const [ma, mb] = await Promise.all([scrape(a), scrape(b)]);
    expect(count(ma, /^genserve_admissions_total\{outcome="daily"\} (\d+)$/m) + count(mb, /^genserve_admissions_total\{outcome="daily"\} (\d+)$/m)).toBe(refused.length);
    expect(ma).toMatch(/^genserve_db_pool_connections\{state="max"\} 10$/m);
  });

  it("reconcile a run whose replica was killed: another replica fails it as interrupted once its lease runs out, callback included", async () => {
    const doomed = await replica();
    extra.push(doomed);
    // Answered by its input, not by the upstream's queue: a run another test left going must not take it.
    upstream.respondWith((body) => (JSON.stringify(body.messages).includes("doomed run") ? { delayMs: 30_000 } : undefined));
    const inFlight = post(doomed, "/api/v1/generate/text", { input: "doomed run", type: "event", workflowSlug: "no-retry", callback: { url: receiver.url } }, key).catch(() => null);
    await waitUntil(() => upstream.requests.some((r) => JSON.stringify(r.body.messages).includes("doomed run")), "the run to reach the model");
    const running = (await get(a, "/api/v1/runs?status=running&q=doomed%20run", key)).json.runs as { id: string }[];
    expect(running).toHaveLength(1);
    const runId = running[0]!.id;
    await doomed.stop("SIGKILL");
    await inFlight;
    await waitUntil(async () => (await get(b, `/api/v1/runs/${runId}`, key)).json.status === "failed", "the run to be reconciled");
    expect((await get(a, `/api/v1/runs/${runId}`, key)).json).toMatchObject({ status: "failed", error: { code: "interrupted" } });
    await waitUntil(() => receiver.received.length === 1, "the run.failed callback");
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.received).toHaveLength(1);
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ type: "run.failed", data: { runId, error: { code: "interrupted" } } });
  });

  it("resume an evaluation whose replica was killed on another one once its lease runs out, each case run to one result", async () => {
    // Any replica may claim a queued evaluation, so the one killed is whichever claimed it — on a
    // database of its own, with two replicas of its own, so that a and b stay up for the tests after.
    const own = await freshDatabase();
    try {
      const pair = await Promise.all([replica(own.url), replica(own.url)]);
      extra.push(...pair);
      const ownKey = pair.map((s) => s.adminKey).find((k): k is string => k !== null)!;
      const cases = Array.from({ length: 8 }, (_, i) => ({ name: `c${i}`, input: `replicated ${i}`, expect: { "": { contains: `replicated ${i}` } } }));
      const put = await fetch(`${pair[0]!.url}/api/v1/suites/replicated`, { method: "PUT", headers: { "content-type": "application/json", "api-key": ownKey }, body: JSON.stringify({ workflow: "no-retry", cases }) });
      expect(put.status).toBe(201);
      upstream.respondWith((body) => (JSON.stringify(body.messages).includes("replicated") ? { delayMs: 400 } : undefined));
      const id = (await post(pair[0]!, "/api/v1/suites/replicated/evaluations", {}, ownKey)).json.id as string;
      const started = new RegExp(`"evaluationId":"${id}".*"msg":"evaluation started"`);
      await waitUntil(async () => (await get(pair[0]!, `/api/v1/evaluations/${id}`, ownKey)).json.totals.done >= 2, "results from the first replica", 60_000);
      const executing = pair.findIndex((s) => started.test(s.output()));
      expect(executing).toBeGreaterThanOrEqual(0);
      const [doomed, survivor] = [pair[executing]!, pair[1 - executing]!];
      await doomed.stop("SIGKILL");
      await waitUntil(async () => (await get(survivor, `/api/v1/evaluations/${id}`, ownKey)).json.status === "completed", "the other replica to finish the evaluation", 60_000);
      const report = (await get(survivor, `/api/v1/evaluations/${id}`, ownKey)).json;
      expect(report.totals).toMatchObject({ runs: 8, done: 8, passed: 8 });
      expect(report.cases.map((c: { runs: unknown[] }) => c.runs.length)).toEqual(Array(8).fill(1));
      expect(survivor.output()).toContain("evaluation resumed");
      await survivor.stop();
    } finally {
      await own.drop();
    }
  }, 180_000);

  describe("streams", () => {
    const invoice = { number: "INV-42", total: 12, currency: "EUR", lines: [{ description: "A description long enough to take many chunks to stream", amount: 12 }] };
    const body = { input: "Invoice INV-42", workflowSlug: "extract-invoice", schema: INVOICE_SCHEMA };
    const resume = (server: GenserveServer, runId: string, lastEventId: string) =>
      fetch(`${server.url}/api/v1/runs/${runId}/stream`, { headers: { "api-key": key, "last-event-id": lastEventId } });

    /** The invoice for the request with this input only: a run another test left going must not take it. */
    const answerWith = (input: string, reply: FakeReply) => upstream.respondWith((sent) => (JSON.stringify(sent.messages).includes(input) ? reply : undefined));

    it("resume on another replica with Last-Event-ID: the rest of the stream and its final event, then the whole of it again", async () => {
      answerWith("Invoice INV-42", { content: JSON.stringify(invoice), chunkSize: 4, chunkDelayMs: 20 });
      const first = await streamRequest(a.url, key, body);
      const runId = first.headers.get("x-run-id")!;
      const seen = await readSome(first, 5);
      const lastId = seen.at(-1)!.id!;

      const resumed = await resume(b, runId, lastId);
      expect(resumed.status).toBe(200);
      const { events: rest } = await readSse(resumed);
      expect(rest.map((e) => Number(e.id))).toEqual(rest.map((_, i) => Number(lastId) + 1 + i));
      expect(rest.at(-1)!.event).toBe("done");
      const text = [...seen, ...rest.slice(0, -1)].map((e) => JSON.parse(e.data).object.text).join("");
      expect(JSON.parse(text)).toEqual(invoice);
      expect(JSON.parse(rest.at(-1)!.data).object).toEqual(invoice);

      const all = await readSse(await resume(b, runId, "0"));
      expect(all.events.map((e) => e.id)).toEqual(all.events.map((_, i) => String(i + 1)));
      expect(all.events.at(-1)!.event).toBe("done");
    });

    it("resume field events on another replica: the same events, with the same ids, as the streaming replica keeps", async () => {
      const other = { ...invoice, number: "INV-43" };
      answerWith("Invoice INV-43", { content: JSON.stringify(other), chunkSize: 4, chunkDelayMs: 10 });
      const first = await fetch(`${a.url}/api/v1/stream/object?fields=true`, {
        method: "POST",
        headers: { "content-type": "application/json", "api-key": key },
        body: JSON.stringify({ ...body, input: "Invoice INV-43" }),
      });
      const runId = first.headers.get("x-run-id")!;
      const seen = await readSome(first, 8);
      const { events: rest } = await readSse(await resume(b, runId, seen.at(-1)!.id!));
      expect(rest.at(-1)!.event).toBe("done");
      const fieldsOf = (events: EventSourceMessage[]) => events.filter((e) => e.event === "field").map((e) => ({ id: e.id, ...JSON.parse(e.data) }));
      const kept = await readSse(await resume(a, runId, "0"));
      expect([...fieldsOf(seen), ...fieldsOf(rest)]).toEqual(fieldsOf(kept.events));
      expect(fieldsOf(kept.events).map((f) => f.pointer)).toEqual(["/number", "/total", "/currency", "/lines/0/description", "/lines/0/amount", "/lines/0", "/lines", ""]);
      expect(fieldsOf(kept.events).every((f) => f.valid === true)).toBe(true);
    });

    it("end honestly on another replica when the streaming replica dies: what it shared, then the interrupted run's error", async () => {
      const doomed = await replica();
      extra.push(doomed);
      answerWith("Invoice INV-42", { content: JSON.stringify(invoice), chunkSize: 4, chunkDelayMs: 400 });
      const first = await streamRequest(doomed.url, key, body);
      const runId = first.headers.get("x-run-id")!;
      const seen = await readSome(first, 3);
      await doomed.stop("SIGKILL");
      const { events } = await readSse(await resume(b, runId, seen.at(-1)!.id!));
      expect(events.at(-1)!.event).toBe("error");
      expect(JSON.parse(events.at(-1)!.data)).toMatchObject({ code: "interrupted", runId });
      expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => Number(seen.at(-1)!.id) + 1 + i));
    });
  });

  describe("when the database goes away", () => {
    let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
    let c: GenserveServer;
    beforeAll(async () => {
      const target = new URL(POSTGRES_URL);
      proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      const through = new URL(database.url);
      through.port = String(proxy.port);
      c = await replica(through.toString());
      extra.push(c);
    });
    afterAll(() => proxy?.close());

    it("answers 503 storage_unavailable with Retry-After, and serves again by itself when it is back", async () => {
      proxy.cut();
      try {
        const list = await get(c, "/api/v1/runs", key);
        expect(list.status).toBe(503);
        expect(list.headers.get("content-type")).toMatch(/application\/problem\+json/);
        expect(list.json).toMatchObject({ code: "storage_unavailable", status: 503 });
        expect(Number(list.headers.get("retry-after"))).toBeGreaterThan(0);
        const run = await post(c, "/api/v1/generate/text", { input: "x", type: "event", workflowSlug: "no-retry", callback: sink() }, key);
        expect(run.status).toBe(503);
        expect(run.json.code).toBe("storage_unavailable");
        expect((await get(c, "/readyz", null)).status).toBe(503);
        expect((await get(c, "/healthz", null)).status).toBe(200);
      } finally {
        proxy.restore();
      }
      await waitUntil(async () => (await get(c, "/api/v1/runs", key)).status === 200, "the replica to serve again");
      expect((await post(c, "/api/v1/generate/text", { input: "x", type: "event", workflowSlug: "no-retry", callback: sink() }, key)).status).toBe(200);
    });

    it("records a run whose end comes during a short outage once the database is back", async () => {
      upstream.respondWith((body) => (JSON.stringify(body.messages).includes("short outage") ? { delayMs: 800 } : undefined));
      const pending = post(c, "/api/v1/generate/text", { input: "short outage", type: "event", workflowSlug: "no-retry", callback: sink() }, key);
      await waitUntil(() => upstream.requests.some((r) => JSON.stringify(r.body.messages).includes("short outage")), "the run to reach the model");
      proxy.cut();
      await new Promise((r) => setTimeout(r, 1_200));
      proxy.restore();
      const res = await pending;
      expect(res.status).toBe(200);
      expect((await get(a, `/api/v1/runs/${res.json.metadata.runId}`, key)).json).toMatchObject({ status: "succeeded" });
    });

    it("under load: answers only successes and 503s (storage_unavailable with Retry-After) while it is away, is back by itself, and loses no run that answered 200", async () => {
      const answered = new Set<string>();
      const refusals: { code: string; retryAfter: string | null }[] = [];
      const others: string[] = [];
      let stopping = false;
      const client = async () => {
        while (!stopping) {
          const res = await post(c, "/api/v1/generate/text", { input: "under load", type: "event", workflowSlug: "no-retry", callback: sink() }, key).catch(() => null);
          if (res?.status === 200) answered.add(res.json.metadata.runId as string);
          else if (res?.status === 503) refusals.push({ code: res.json.code as string, retryAfter: res.headers.get("retry-after") });
          else if (res) others.push(`${res.status} ${res.text.slice(0, 200)}`);
        }
      };
      const clients = Array.from({ length: 8 }, () => client());
      try {
        await waitUntil(() => answered.size >= 20, "runs before the outage", 30_000);
        proxy.cut();
        try {
          await waitUntil(() => refusals.length >= 20, "refusals during the outage", 30_000);
        } finally {
          proxy.restore();
        }
        const before = answered.size;
        await waitUntil(() => answered.size >= before + 20, "runs once the database is back", 60_000);
      } finally {
        stopping = true;
        await Promise.all(clients);
      }
      expect(others).toEqual([]);
      // A run whose end could not be written in its grace is reconciled later as interrupted (503 too).
      for (const r of refusals) expect(["storage_unavailable", "interrupted"]).toContain(r.code);
      for (const r of refusals.filter((r) => r.code === "storage_unavailable")) expect(Number(r.retryAfter)).toBeGreaterThan(0);
      // Every run that answered 200 is stored as succeeded, as the other replica reads it.
      for (const id of answered) expect([id, (await get(a, `/api/v1/runs/${id}`, key)).json.status]).toEqual([id, "succeeded"]);
      await waitUntil(async () => (await get(a, "/api/v1/runs?status=running&limit=100", key)).json.runs.length === 0, "no run left running", 30_000);
    }, 180_000);

    it("answers 503 when the outage outlasts the run's grace, writes nothing half-way, and the run ends failed, never running forever", async () => {
      upstream.respondWith((body) => (JSON.stringify(body.messages).includes("long outage") ? { delayMs: 300 } : undefined));
      const pending = post(c, "/api/v1/generate/text", { input: "long outage", type: "event", workflowSlug: "no-retry", callback: { url: receiver.url } }, key);
      await waitUntil(() => upstream.requests.some((r) => JSON.stringify(r.body.messages).includes("long outage")), "the run to reach the model");
      const runId = (await get(a, "/api/v1/runs?status=running&q=long%20outage", key)).json.runs[0].id as string;
      proxy.cut();
      const res = await pending;
      expect(res.status).toBe(503);
      expect(res.json).toMatchObject({ code: "storage_unavailable" });
      // The run is no longer renewed by c: once the database is back, its lease runs out and it is reconciled.
      proxy.restore();
      await waitUntil(async () => (await get(a, `/api/v1/runs/${runId}`, key)).json.status === "failed", "the run to be reconciled");
      expect((await get(a, `/api/v1/runs/${runId}`, key)).json).toMatchObject({ error: { code: "interrupted" } });
      await waitUntil(() => receiver.received.length === 1, "the run.failed callback");
    });
  });
});
