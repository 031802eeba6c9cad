import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startReceiver, waitUntil } from "../../test/helpers/receiver";
import { createKey } from "../keys/api-keys";
import { openSqliteStore } from "../store/sqlite";
import type { Store } from "../store/store-types";
import { DeliveryWorker, queueEvent, webhookSignature, type DeliveryOptions } from "./worker";

// The delivery worker in-process: a real SQLite outbox, a loopback receiver, real signatures.

let store: Store;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let worker: DeliveryWorker | undefined;
let key: { id: string; webhookSecret: string };

beforeEach(async () => {
  store = openSqliteStore(mkdtempSync(path.join(os.tmpdir(), "genserve-delivery-")));
  receiver = await startReceiver();
  const { record } = await createKey(store, { name: "k", admin: false });
  key = { id: record.id, webhookSecret: record.webhookSecret };
});
afterEach(async () => {
  await worker?.stop(1_000);
  worker = undefined;
  await receiver.close();
  await store.close();
});

const options = (extra: Partial<DeliveryOptions> = {}): DeliveryOptions => ({ allowPrivate: true, scheduleMs: [50, 50], timeoutMs: 1_000, concurrency: 4, pollMs: 20, publicUrl: "http://127.0.0.1:1", owner: "test", ...extra });

/** A finished run whose event waits in the outbox. */
async function storeEvent(id: string, url: string, headers: Record<string, string> = {}, leaseUntil?: string) {
  const now = new Date().toISOString();
  await store.runs.insert({ id: `run_${id}`, operation: "generate.text", workflowSlug: "w", keyId: key.id, input: "x", schema: null, contextSlugs: [], attachments: [], callback: { url }, modelTag: "m", createdAt: now });
  const outcome = { status: "succeeded" as const, output: "t", error: null, modelName: "m", modelTag: "m", decoding: "none" as const, warnings: [], inputTokens: 1, outputTokens: 1, cost: "0", durationMs: 1, attempts: 1, finishedAt: now };
  await store.runs.finish(`run_${id}`, outcome, { id: `evt_${id}`, runId: `run_${id}`, keyId: key.id, url, headers, payload: JSON.stringify({ type: "run.succeeded", id: `evt_${id}` }), nextAttemptAt: now, createdAt: now, leaseUntil });
  return (await store.events.forRun(`run_${id}`))!;
}
const deliveries = async (id: string) => (await store.events.forRun(`run_${id}`))!;

describe("DeliveryWorker", () => {
  it("delivers a signed event with the caller's headers and logs the attempt", async () => {
    await storeEvent("a", receiver.url, { "X-Tenant": "acme" });
    worker = new DeliveryWorker(store, pino({ level: "silent" }), options());
    worker.start();
    await waitUntil(async () => (await deliveries("a")).status === "delivered", "delivery");
    const [request] = receiver.received;
    expect(request!.headers["x-tenant"]).toBe("acme");
    expect(new Webhook(key.webhookSecret).verify(request!.body, request!.headers as Record<string, string>)).toMatchObject({ id: "evt_a" });
    expect((await deliveries("a")).deliveries).toEqual([{ attemptedAt: expect.any(String), statusCode: 200, error: null, durationMs: expect.any(Number), nextAttemptAt: null }]);
  });

  it("retries failures on the schedule, then gives the event up as dead", async () => {
    receiver.script({ status: 500 }, { status: 503 }, { status: 502 });
    await storeEvent("b", receiver.url);
    worker = new DeliveryWorker(store, pino({ level: "silent" }), options());
    worker.start();
    await waitUntil(async () => (await deliveries("b")).status === "dead", "the event to be given up");
    expect((await deliveries("b")).deliveries.map((d) => d.statusCode)).toEqual([500, 503, 502]);
  });

  it("records whatever fails before sending as an attempt, and never retries it before its time", async () => {
    await storeEvent("c", receiver.url, { "X-Bad": "中文" });
    // A short time-out: nothing of the refused request may be left to fire once it has passed.
    worker = new DeliveryWorker(store, pino({ level: "silent" }), options({ scheduleMs: [60_000], timeoutMs: 100 }));
    worker.start();
    await waitUntil(async () => (await deliveries("c")).attempts === 1, "the failed attempt");
    await new Promise((r) => setTimeout(r, 250));
    const event = await deliveries("c");
    expect(event.attempts).toBe(1);
    expect(event.deliveries[0]).toMatchObject({ statusCode: null, error: expect.stringMatching(/could not send/), nextAttemptAt: expect.any(String) });
    expect(receiver.received).toEqual([]);
  });

  it("refuses private addresses unless allowed: resolved, and named literally", async () => {
    await storeEvent("d", receiver.url.replace("127.0.0.1", "localhost"));
    await storeEvent("e", receiver.url);
    worker = new DeliveryWorker(store, pino({ level: "silent" }), options({ allowPrivate: false, scheduleMs: [] }));
    worker.start();
    await waitUntil(async () => (await deliveries("d")).status === "dead" && (await deliveries("e")).status === "dead", "both refused");
    expect((await deliveries("d")).deliveries[0]!.error).toMatch(/refused/);
    expect((await deliveries("e")).deliveries[0]!.error).toMatch(/refused/);
    expect(receiver.received).toEqual([]);
  });

  it("delivers an event held by a ticket the moment it is handed over, and no other process claims it meanwhile", async () => {
    const silent = pino({ level: "silent" });
    worker = new DeliveryWorker(store, silent, options({ owner: "a" }));
    const other = new DeliveryWorker(store, silent, options({ owner: "b" }));
    other.start();
    try {
      const ticket = worker.hold()!;
      const event = await storeEvent("h", receiver.url, {}, ticket.leaseUntil);
      // Several of the other process's passes go by: the held event is not theirs to take.
      await new Promise((r) => setTimeout(r, 150));
      expect(receiver.received).toEqual([]);
      ticket.dispatch(event);
      await waitUntil(async () => (await deliveries("h")).status === "delivered", "delivery");
      expect(receiver.received).toHaveLength(1);
    } finally {
      await other.stop(1_000);
    }
  });

  it("hands out no more tickets than it has free slots; a released ticket frees its slot", async () => {
    worker = new DeliveryWorker(store, pino({ level: "silent" }), options({ concurrency: 2 }));
    const first = worker.hold()!;
    expect(worker.hold()).not.toBeNull();
    expect(worker.hold()).toBeNull();
    first.release();
    expect(() => first.release()).toThrow(/once/);
    expect(worker.hold()).not.toBeNull();
  });

  it("delivers an event queued while every slot was busy as soon as a slot frees, without waiting for the next poll", async () => {
    receiver.script({ delayMs: 300 });
    worker = new DeliveryWorker(store, pino({ level: "silent" }), options({ concurrency: 1, pollMs: 60_000 }));
    const ticket = worker.hold()!;
    ticket.dispatch(await storeEvent("i", receiver.url, {}, ticket.leaseUntil));
    expect(worker.hold()).toBeNull();
    await storeEvent("j", receiver.url);
    worker.kick();
    await waitUntil(async () => (await deliveries("j")).status === "delivered", "the second delivery", 5_000);
    expect((await deliveries("i")).status).toBe("delivered");
  });

  it("delivers one event after another over one kept-alive connection, and opens a new one when the receiver closed it", async () => {
    worker = new DeliveryWorker(store, pino({ level: "silent" }), options());
    worker.start();
    for (const id of ["k1", "k2", "k3"]) {
      await storeEvent(id, receiver.url);
      worker.kick();
      await waitUntil(async () => (await deliveries(id)).status === "delivered", `delivery of ${id}`);
    }
    expect(receiver.connections()).toBe(1);
    receiver.dropConnections();
    await storeEvent("k4", receiver.url);
    worker.kick();
    await waitUntil(async () => (await deliveries("k4")).status === "delivered", "delivery after the connection closed");
    expect((await deliveries("k4")).attempts).toBe(1);
    expect(receiver.connections()).toBe(2);
  });

  it("queueEvent gives the slot back when the event was not stored, and delivers it held when it was", async () => {
    worker = new DeliveryWorker(store, pino({ level: "silent" }), options({ concurrency: 1, pollMs: 60_000 }));
    const now = new Date().toISOString();
    const event = { id: "evt_q", runId: "run_q", keyId: key.id, url: receiver.url, headers: {}, payload: "{}", nextAttemptAt: now, createdAt: now };
    expect(await queueEvent(worker, event, async () => false)).toBe(false);
    await expect(queueEvent(worker, event, async () => Promise.reject(new Error("storage down")))).rejects.toThrow("storage down");
    // Both gave their slot back: the one slot is free for the next event, which is written held.
    await store.runs.insert({ id: "run_q", operation: "generate.text", workflowSlug: "w", keyId: key.id, input: "x", schema: null, contextSlugs: [], attachments: [], callback: { url: receiver.url }, modelTag: "m", createdAt: now });
    const outcome = { status: "succeeded" as const, output: "t", error: null, modelName: "m", modelTag: "m", decoding: "none" as const, warnings: [], inputTokens: 1, outputTokens: 1, cost: "0", durationMs: 1, attempts: 1, finishedAt: now };
    let written: { leaseUntil?: string | null } | undefined;
    expect(await queueEvent(worker, event, (held) => ((written = held), store.runs.finish("run_q", outcome, held)))).toBe(true);
    expect(written?.leaseUntil).toEqual(expect.any(String));
    await waitUntil(async () => (await store.events.forRun("run_q"))?.status === "delivered", "delivery without a poll");
  });
});

describe("webhookSignature", () => {
  it("signs as the standardwebhooks package does, for a current and a rotated secret", () => {
    const at = new Date("2026-11-25T06:00:00.000Z");
    const body = JSON.stringify({ type: "run.succeeded", data: { text: "héllo ✓" } });
    for (const secret of ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_" + Buffer.from("another secret of some length").toString("base64")]) {
      expect(webhookSignature(secret, "evt_01", at, body)).toBe(new Webhook(secret).sign("evt_01", at, body));
    }
  });
});
