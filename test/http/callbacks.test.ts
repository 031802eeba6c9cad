import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { INVOICE_SCHEMA, testConfig } from "../helpers/config";
import { cli, createKey, get, post, startGenserve, tempDir, writeConfig } from "../helpers/genserve";
import { startReceiver, waitUntil } from "../helpers/receiver";
import { useGenserve } from "../helpers/suite";

const FAST_RETRIES = `
network:
  allowPrivate: true
limits:
  callbackRetryScheduleMs: [200, 300, 400]
  callbackTimeoutMs: 1000
  callbackPollMs: 100
  asyncConcurrency: 1
`;

const ctx = useGenserve(FAST_RETRIES);
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let caller: { id: string; key: string; webhookSecret: string };

beforeAll(async () => {
  receiver = await startReceiver();
  caller = await createKey("hooks", { dataDir: ctx.server.dataDir });
});
afterAll(async () => receiver?.close());
beforeEach(() => receiver.reset());

const invoice = { number: "INV-5", total: 5, currency: "EUR" };
const objectRun = (callback: Record<string, unknown>, key = caller.key) =>
  post(ctx.server, "/api/v1/generate/object", { input: "Invoice 5", type: "event", workflowSlug: "no-retry", schema: INVOICE_SCHEMA, callback }, key);
const runOf = async (runId: string) => (await get(ctx.server, `/api/v1/runs/${runId}`, caller.key)).json;

describe("callback events", () => {
  it("delivers a signed run.succeeded event with the caller's headers and custom properties", async () => {
    ctx.upstream.reply({ content: JSON.stringify(invoice), usage: { prompt_tokens: 9, completion_tokens: 4 } });
    const res = await objectRun({ url: receiver.url, customProperties: { ticket: 42 }, headers: { "X-Tenant": "acme", "Content-Type": "text/evil", "webhook-id": "forged" } });
    expect(res.status).toBe(200);
    await waitUntil(() => receiver.received.length === 1, "the event");
    const { headers, body } = receiver.received[0]!;
    const event = new Webhook(caller.webhookSecret).verify(body, headers as Record<string, string>) as Record<string, any>;
    expect(event).toMatchObject({
      type: "run.succeeded",
      id: headers["webhook-id"],
      createdAt: expect.any(String),
      data: { runId: res.json.metadata.runId, operation: "generate.object", workflowSlug: "no-retry", customProperties: { ticket: 42 }, object: invoice, metadata: res.json.metadata },
    });
    expect(headers["x-tenant"]).toBe("acme");
    expect(headers["content-type"]).toBe("application/json");
    expect(headers["webhook-id"]).toMatch(/^evt_/);
    await waitUntil(async () => (await runOf(res.json.metadata.runId)).deliveries?.status === "delivered", "the delivery to be logged");
    const run = await runOf(res.json.metadata.runId);
    expect(run.deliveries.log).toEqual([{ attemptedAt: expect.any(String), statusCode: 200, error: null, durationMs: expect.any(Number), nextAttemptAt: null }]);
  });

  it("sends run.failed with the problem for a failed run", async () => {
    ctx.upstream.reply({ content: '{"number": 1}' });
    const res = await objectRun({ url: receiver.url });
    expect(res.status).toBe(502);
    await waitUntil(() => receiver.received.length === 1, "the event");
    const event = JSON.parse(receiver.received[0]!.body);
    expect(event).toMatchObject({ type: "run.failed", data: { runId: res.json.runId, error: { code: "output_invalid" } } });
    expect(event.data.object).toBeUndefined();
  });

  it("retries 5xx, time-outs and redirects on the schedule with the same webhook-id, then succeeds", async () => {
    receiver.script({ status: 500 }, { delayMs: 1_500 }, { status: 302, location: "http://127.0.0.1:9/" }, { status: 204 });
    ctx.upstream.reply({ content: JSON.stringify(invoice) });
    const res = await objectRun({ url: receiver.url });
    const runId = res.json.metadata.runId;
    await waitUntil(async () => (await runOf(runId)).deliveries?.status === "delivered", "delivery after retries");
    const run = await runOf(runId);
    expect(run.deliveries.log.map((d: { statusCode: number | null }) => d.statusCode)).toEqual([500, null, 302, 204]);
    expect(run.deliveries.log[1].error).toMatch(/timed out/);
    expect(new Set(receiver.received.map((r) => r.headers["webhook-id"])).size).toBe(1);
    // Waits follow the schedule (200, 300, 400 ms ± 10%), measured between attempts.
    const gaps = receiver.received.slice(1).map((r, i) => r.at - receiver.received[i]!.at);
    expect(gaps[0]).toBeGreaterThanOrEqual(170);
  });

  it("stops at 410 Gone, and marks an event dead when the schedule runs out", async () => {
    receiver.script({ status: 410 });
    ctx.upstream.reply({ content: JSON.stringify(invoice) });
    const gone = (await objectRun({ url: receiver.url })).json.metadata.runId;
    await waitUntil(async () => (await runOf(gone)).deliveries?.status === "dead", "410 to stop retries");
    expect((await runOf(gone)).deliveries.attempts).toBe(1);

    ctx.upstream.reply({ content: JSON.stringify(invoice) });
    const refused = (await objectRun({ url: "http://127.0.0.1:9/closed" })).json.metadata.runId;
    await waitUntil(async () => (await runOf(refused)).deliveries?.status === "dead", "the schedule to run out");
    const run = await runOf(refused);
    expect(run.deliveries.attempts).toBe(4);
    expect(run.deliveries.log[0].error).toMatch(/ECONNREFUSED/);
  });

  it("redelivers on request with the same webhook-id", async () => {
    ctx.upstream.reply({ content: JSON.stringify(invoice) });
    const runId = (await objectRun({ url: receiver.url })).json.metadata.runId;
    await waitUntil(() => receiver.received.length === 1, "the first delivery");
    const again = await post(ctx.server, `/api/v1/runs/${runId}/deliveries/redeliver`, {}, caller.key);
    expect(again.status).toBe(202);
    await waitUntil(() => receiver.received.length === 2, "the redelivery");
    expect(receiver.received[1]!.headers["webhook-id"]).toBe(receiver.received[0]!.headers["webhook-id"]);
  });

  it("signs with both secrets for a day after a rotation", async () => {
    const rotated = JSON.parse(await cli(["keys", "rotate-secret", caller.id, "--json"], { dataDir: ctx.server.dataDir })) as { webhookSecret: string };
    ctx.upstream.reply({ content: JSON.stringify(invoice) });
    await objectRun({ url: receiver.url });
    await waitUntil(() => receiver.received.length === 1, "the event");
    const { headers, body } = receiver.received[0]!;
    expect(String(headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(() => new Webhook(rotated.webhookSecret).verify(body, headers as Record<string, string>)).not.toThrow();
    expect(() => new Webhook(caller.webhookSecret).verify(body, headers as Record<string, string>)).not.toThrow();
    caller.webhookSecret = rotated.webhookSecret;
  });
});

describe("outbound safety and the built-in inbox", () => {
  it("refuses private callback addresses unless they are the service's own inbox", async () => {
    const dir = tempDir();
    const upstream = ctx.upstream;
    const srv = await startGenserve({ configFile: writeConfig(dir, testConfig(upstream.url, "limits:\n  callbackRetryScheduleMs: [100]\n  callbackPollMs: 100\n")), dataDir: `${dir}/data` });
    try {
      const run = (url: string) => post(srv, "/api/v1/generate/text", { input: "x", type: "event", workflowSlug: "no-retry", callback: { url } }, srv.adminKey!);
      for (const literal of ["http://127.0.0.1:8080/x", "http://[::1]/x", "http://169.254.169.254/latest", "http://2130706433/x", "http://10.0.0.7/x", "http://[::ffff:127.0.0.1]/x"]) {
        const refused = await run(literal);
        expect(refused.status, literal).toBe(400);
        expect(refused.json.errors).toEqual([{ path: "/callback/url", message: expect.stringContaining("private address") }]);
      }
      // A hostname is resolved when connecting: refused then, and recorded on the delivery.
      const byName = await run(`http://localhost:${receiver.port}/hooks`);
      expect(byName.status).toBe(200);
      const runId = byName.json.metadata.runId;
      await waitUntil(async () => (await get(srv, `/api/v1/runs/${runId}`, srv.adminKey!)).json.deliveries?.status === "dead", "the refusal to be recorded");
      expect((await get(srv, `/api/v1/runs/${runId}`, srv.adminKey!)).json.deliveries.log[0].error).toMatch(/private address/);
      expect(receiver.received).toHaveLength(0);

      // The built-in inbox on the service's own loopback address is allowed, and verifies signatures.
      const inbox = await post(srv, "/api/v1/inbox", {}, srv.adminKey!);
      expect(inbox.status).toBe(201);
      expect(inbox.json.url).toBe(`${srv.url}/api/v1/inbox/${inbox.json.id}`);
      const delivered = await run(inbox.json.url);
      expect(delivered.status).toBe(200);
      let events: { verified: boolean; body: { data: { runId: string } }; headers: Record<string, string> }[] = [];
      await waitUntil(async () => (events = (await get(srv, `/api/v1/inbox/${inbox.json.id}`, srv.adminKey!)).json.events ?? []).length === 1, "the inbox delivery");
      expect(events[0]).toMatchObject({ verified: true, body: { data: { runId: delivered.json.metadata.runId } } });
      expect(events[0]!.headers["webhook-id"]).toMatch(/^evt_/);
      // Only the creating key reads it.
      const other = await createKey("nosy", { dataDir: `${dir}/data` });
      expect((await get(srv, `/api/v1/inbox/${inbox.json.id}`, other.key)).status).toBe(404);
      // Anyone may post to it; an unsigned post is stored as not verified.
      await fetch(inbox.json.url, { method: "POST", body: '{"forged":true}', headers: { "content-type": "application/json" } });
      events = (await get(srv, `/api/v1/inbox/${inbox.json.id}`, srv.adminKey!)).json.events;
      expect(events[0]).toMatchObject({ verified: false, body: { forged: true } });
    } finally {
      await srv.stop();
    }
  });
});

describe("async runs", () => {
  it("answers 202 at once, runs in the background, and delivers the result to the callback", async () => {
    ctx.upstream.reply({ content: JSON.stringify(invoice), delayMs: 600 });
    const res = await post(
      ctx.server,
      "/api/v1/generate/object",
      { input: "Invoice 5", type: "event", workflowSlug: "no-retry", schema: INVOICE_SCHEMA, callback: { url: receiver.url } },
      caller.key,
      { prefer: "respond-async" },
    );
    expect(res.status).toBe(202);
    const runId = res.json.runId;
    expect(res.json).toEqual({ runId, status: "queued" });
    expect(res.headers.get("x-run-id")).toBe(runId);
    expect(res.headers.get("location")).toBe(`/api/v1/runs/${runId}`);
    expect(["queued", "running"]).toContain((await runOf(runId)).status);
    await waitUntil(() => receiver.received.length === 1, "the callback");
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ type: "run.succeeded", data: { runId, object: invoice } });
    expect(await runOf(runId)).toMatchObject({ status: "succeeded", output: invoice });
  });

  it("validates before accepting: a bad async request is a 400, not a queued run", async () => {
    const res = await post(ctx.server, "/api/v1/generate/text", { input: "", type: "event", workflowSlug: "no-retry", callback: { url: receiver.url } }, caller.key, { prefer: "respond-async" });
    expect(res.status).toBe(400);
  });
});

describe("idempotency", () => {
  const body = { input: "Invoice idem", type: "event", workflowSlug: "no-retry", schema: INVOICE_SCHEMA, callback: { url: receiver?.url ?? "" } };

  it("replays the first response for a repeat: same run, one model call, one event", async () => {
    ctx.upstream.reply({ content: JSON.stringify(invoice) });
    const payload = { ...body, callback: { url: receiver.url } };
    const first = await post(ctx.server, "/api/v1/generate/object", payload, caller.key, { "idempotency-key": "order-1" });
    const second = await post(ctx.server, "/api/v1/generate/object", payload, caller.key, { "idempotency-key": "order-1" });
    expect(second.status).toBe(200);
    expect(second.json).toEqual(first.json);
    expect(second.headers.get("x-run-id")).toBe(first.headers.get("x-run-id"));
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(ctx.upstream.requests).toHaveLength(1);
    await waitUntil(() => receiver.received.length === 1, "the event");
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).toHaveLength(1);

    const other = await post(ctx.server, "/api/v1/generate/object", { ...payload, input: "something else" }, caller.key, { "idempotency-key": "order-1" });
    expect(other.status).toBe(422);
    expect(other.json.code).toBe("idempotency_mismatch");
    // Keys are scoped per API key.
    ctx.upstream.reply({ content: JSON.stringify(invoice) });
    const elsewhere = await post(ctx.server, "/api/v1/generate/object", payload, ctx.key, { "idempotency-key": "order-1" });
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.headers.get("x-run-id")).not.toBe(first.headers.get("x-run-id"));
  });

  it("answers 409 while the first request is still running", async () => {
    ctx.upstream.reply({ content: JSON.stringify(invoice), delayMs: 800 });
    const payload = { ...body, callback: { url: receiver.url } };
    const first = post(ctx.server, "/api/v1/generate/object", payload, caller.key, { "idempotency-key": "order-2" });
    await waitUntil(() => ctx.upstream.requests.length === 1, "the first run to start");
    const second = await post(ctx.server, "/api/v1/generate/object", payload, caller.key, { "idempotency-key": "order-2" });
    expect(second.status).toBe(409);
    expect(second.json.code).toBe("idempotency_in_progress");
    expect((await first).status).toBe(200);
  });

  it("does not keep a key whose request failed validation", async () => {
    const bad = await post(ctx.server, "/api/v1/generate/object", { ...body, input: "" }, caller.key, { "idempotency-key": "order-3" });
    expect(bad.status).toBe(400);
    ctx.upstream.reply({ content: JSON.stringify(invoice) });
    const good = await post(ctx.server, "/api/v1/generate/object", { ...body, callback: { url: receiver.url } }, caller.key, { "idempotency-key": "order-3" });
    expect(good.status).toBe(200);
  });
});

describe("durability", () => {
  it("delivers an event again after kill -9 cut its delivery, with the same webhook-id", async () => {
    const dir = tempDir();
    const configFile = writeConfig(dir, testConfig(ctx.upstream.url, FAST_RETRIES));
    const first = await startGenserve({ configFile, dataDir: `${dir}/data` });
    await new Promise((r) => setTimeout(r, 300)); // let stray events of earlier tests land first
    receiver.reset();
    receiver.script({ delayMs: 5_000 });
    ctx.upstream.reply({ content: "done" });
    const res = await post(first, "/api/v1/generate/text", { input: "x", type: "event", workflowSlug: "no-retry", callback: { url: receiver.url } }, first.adminKey!);
    expect(res.status).toBe(200);
    // Events of earlier tests may still arrive: count only this run's.
    const mine = () => receiver.received.filter((r) => JSON.parse(r.body).data?.runId === res.json.metadata.runId);
    await waitUntil(() => mine().length === 1, "the delivery to start");
    await first.stop("SIGKILL");

    const second = await startGenserve({ configFile, dataDir: `${dir}/data` });
    try {
      await waitUntil(() => mine().length === 2, "the delivery to resume after restart");
      expect(mine()[1]!.headers["webhook-id"]).toBe(mine()[0]!.headers["webhook-id"]);
      await waitUntil(async () => (await get(second, `/api/v1/runs/${res.json.metadata.runId}`, first.adminKey!)).json.deliveries?.status === "delivered", "delivered");
      await new Promise((r) => setTimeout(r, 500));
      expect(mine()).toHaveLength(2);
    } finally {
      await second.stop();
    }
  });

  it("keeps queued async runs across kill -9 and retries the one that was running", async () => {
    const dir = tempDir();
    const configFile = writeConfig(dir, testConfig(ctx.upstream.url, FAST_RETRIES));
    const first = await startGenserve({ configFile, dataDir: `${dir}/data` });
    ctx.upstream.reply({ delayMs: 10_000, content: "never seen" });
    const enqueue = (input: string) =>
      post(first, "/api/v1/generate/text", { input, type: "event", workflowSlug: "no-retry", callback: { url: receiver.url } }, first.adminKey!, { prefer: "respond-async" });
    const a = (await enqueue("first")).json.runId;
    const b = (await enqueue("second")).json.runId; // waits: asyncConcurrency is 1
    await waitUntil(() => ctx.upstream.requests.length === 1, "the first run to reach the model");
    await first.stop("SIGKILL");

    ctx.upstream.reset();
    ctx.upstream.reply({ content: "done a" }, { content: "done b" });
    const second = await startGenserve({ configFile, dataDir: `${dir}/data` });
    try {
      const statusOf = async (id: string) => (await get(second, `/api/v1/runs/${id}`, first.adminKey!)).json.status;
      await waitUntil(async () => (await statusOf(a)) === "succeeded" && (await statusOf(b)) === "succeeded", "both runs to finish after restart");
      expect(ctx.upstream.requests.map((r) => r.body.messages.at(-1)!.content)).toEqual(["first", "second"]);
      await waitUntil(() => receiver.received.length === 2, "both callbacks");
    } finally {
      await second.stop();
    }
  });
});
