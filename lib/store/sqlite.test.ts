import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createKey } from "../keys/keys";
import { openSqliteStore } from "./sqlite";
import type { NewRun, Store } from "./types";

// The storage contract on a real SQLite file: every operation a caller relies on.

let store: Store;
let keyId: string;
beforeEach(async () => {
  store = openSqliteStore(mkdtempSync(path.join(os.tmpdir(), "genserve-store-")));
  keyId = (await createKey(store, { name: "k", admin: false })).record.id;
});
afterEach(() => store.close());

const at = (ms: number) => new Date(Date.UTC(2026, 10, 23, 0, 0, 0, ms)).toISOString();
const run = (id: string, extra: Partial<NewRun> = {}): NewRun => ({
  id,
  operation: "generate.text",
  workflowSlug: "w",
  keyId,
  input: "x",
  schema: null,
  contextSlugs: [],
  attachments: [],
  callback: { url: "https://example.com/h", headers: { Authorization: "Bearer s" } },
  modelTag: "m",
  createdAt: at(0),
  ...extra,
});
const outcome = { status: "succeeded" as const, output: { a: 1 }, error: null, modelName: "m1", modelTag: "m", decoding: "provider" as const, inputTokens: 3, outputTokens: 4, cost: "0.1", durationMs: 5, attempts: 1, finishedAt: at(10) };
const event = (id: string, runId: string) => ({ id, runId, keyId, url: "https://example.com/h", headers: { "X-A": "1" }, payload: "{}", nextAttemptAt: at(0), createdAt: at(0) });

describe("SQLite store", () => {
  it("stores a run, finishes it and queues its event in one step, and lists runs newest first by filter", async () => {
    await store.runs.insert(run("run_01A", { promptTokens: 12, outputTokenLimit: 30, contextVersions: { c: "config" } }));
    await store.runs.insert(run("run_01B", { operation: "stream.object", workflowSlug: "v" }));
    await store.runs.finish("run_01A", outcome, event("evt_1", "run_01A"));
    expect(await store.runs.get("run_01A")).toMatchObject({ status: "succeeded", output: { a: 1 }, promptTokens: 12, outputTokenLimit: 30, contextVersions: { c: "config" }, callback: { headers: { Authorization: "Bearer s" } } });
    expect((await store.runs.list({ limit: 10 })).map((r) => r.id)).toEqual(["run_01B", "run_01A"]);
    expect((await store.runs.list({ limit: 10, operation: "stream.object" })).map((r) => r.id)).toEqual(["run_01B"]);
    expect((await store.runs.list({ limit: 10, beforeId: "run_01B" })).map((r) => r.id)).toEqual(["run_01A"]);
    expect((await store.runs.list({ limit: 10, keyId: "key_other" })).length).toBe(0);
    expect((await store.events.due(at(1), 10)).map((e) => e.id)).toEqual(["evt_1"]);
  });

  it("claims queued runs oldest first, each once, and requeues an interrupted async run only once", async () => {
    await store.runs.insert(run("run_01Q1", { status: "queued", request: { input: "a" } }));
    await store.runs.insert(run("run_01Q2", { status: "queued", request: { input: "b" } }));
    const first = await store.runs.claimQueued(at(1));
    expect(first).toMatchObject({ id: "run_01Q1", status: "running", request: { input: "a" } });
    expect((await store.runs.claimQueued(at(2)))!.id).toBe("run_01Q2");
    expect(await store.runs.claimQueued(at(3))).toBeNull();
    expect(await store.runs.requeueInterrupted(at(4))).toBe(2);
    await store.runs.claimQueued(at(5));
    await store.runs.claimQueued(at(5));
    // Each was started twice now: a second crash does not queue them again.
    expect(await store.runs.requeueInterrupted(at(6))).toBe(0);
    expect((await store.runs.running()).map((r) => r.id)).toEqual(["run_01Q1", "run_01Q2"]);
  });

  it("logs delivery attempts, moves events on, and makes an event due again on redelivery", async () => {
    await store.runs.insert(run("run_01E"));
    await store.runs.finish("run_01E", outcome, event("evt_2", "run_01E"));
    await store.events.recordAttempt("evt_2", { attemptedAt: at(1), statusCode: 500, error: null, durationMs: 3, nextAttemptAt: at(5_000) }, "pending");
    expect(await store.events.due(at(2), 10)).toEqual([]);
    expect((await store.events.due(at(6_000), 10)).map((e) => e.attempts)).toEqual([1]);
    await store.events.recordAttempt("evt_2", { attemptedAt: at(6_000), statusCode: 200, error: null, durationMs: 2, nextAttemptAt: null }, "delivered");
    const delivered = await store.events.forRun("run_01E");
    expect(delivered).toMatchObject({ status: "delivered", attempts: 2, headers: { "X-A": "1" } });
    expect(delivered!.deliveries.map((d) => d.statusCode)).toEqual([500, 200]);
    await store.events.redeliver("evt_2", at(7_000));
    expect((await store.events.due(at(7_000), 10)).map((e) => e.id)).toEqual(["evt_2"]);
  });

  it("reserves, completes, replays and releases idempotency keys per API key", async () => {
    expect(await store.idempotency.begin(keyId, "k1", "h1", at(0), 60_000)).toBeNull();
    expect(await store.idempotency.begin(keyId, "k1", "h1", at(1), 60_000)).toMatchObject({ state: "in_progress", requestHash: "h1" });
    await store.idempotency.complete(keyId, "k1", { runId: "run_1", status: 200, body: "{}" });
    expect(await store.idempotency.begin(keyId, "k1", "h2", at(2), 60_000)).toMatchObject({ state: "done", requestHash: "h1", runId: "run_1", responseStatus: 200 });
    await store.idempotency.release(keyId, "k1");
    expect(await store.idempotency.begin(keyId, "k1", "h2", at(3), 60_000)).toBeNull();
  });

  it("keeps threads per key, in order, and deletes them with their messages", async () => {
    const thread = { id: "t", keyId, workflowSlug: "w", createdAt: at(0), updatedAt: at(0) };
    expect(await store.threads.create(thread)).toBe(true);
    expect(await store.threads.create(thread)).toBe(false);
    await store.threads.append(keyId, "t", [{ role: "user", content: "q", runId: "run_1", createdAt: at(1) }, { role: "assistant", content: "a", runId: "run_1", createdAt: at(1) }], at(1));
    expect((await store.threads.messages(keyId, "t")).map((m) => m.content)).toEqual(["q", "a"]);
    expect(await store.threads.get("key_other", "t")).toBeNull();
    expect(await store.threads.delete(keyId, "t")).toBe(true);
    expect(await store.threads.messages(keyId, "t")).toEqual([]);
  });

  it("versions catalog entries immutably, a deletion included", async () => {
    const v1 = await store.catalog.append("context", "c", { content: "one" }, keyId, at(0));
    const v2 = await store.catalog.append("context", "c", { content: "two" }, keyId, at(1));
    expect([v1.version, v2.version]).toEqual([1, 2]);
    await store.catalog.append("context", "c", null, keyId, at(2));
    expect(await store.catalog.get("context", "c")).toMatchObject({ version: 3, body: null });
    expect((await store.catalog.latest("context")).map((v) => [v.slug, v.version])).toEqual([["c", 3]]);
  });

  it("keeps an inbox's newest events within its limits", async () => {
    await store.inboxes.create({ id: "inb_1", keyId, host: "h", createdAt: at(0) });
    for (let i = 0; i < 5; i++) await store.inboxes.receive("inb_1", { receivedAt: at(i), headers: {}, body: String(i), verified: true }, 3, 60_000);
    expect((await store.inboxes.events("inb_1")).map((e) => e.body)).toEqual(["4", "3", "2"]);
  });
});
