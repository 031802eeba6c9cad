import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { NO_LIMITS } from "../domain/key-limits";
import { openSqliteStore } from "../store/sqlite";
import { StreamHub } from "./stream-hub";

const collect = async <T>(iterable: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
};

describe("StreamHub", () => {
  it("replays events after a sequence number, then follows live ones to the end", async () => {
    const hub = new StreamHub({ retainMs: 60_000 });
    const writer = hub.open("run_1", "key_a");
    writer.push({ kind: "item", text: "{" });
    writer.push({ kind: "item", text: '"a"' });
    const following = collect(hub.follow("run_1", 1));
    writer.push({ kind: "item", text: ":1}" });
    writer.push({ kind: "done", payload: { runId: "run_1", object: { a: 1 }, metadata: {} as never } });
    writer.push({ kind: "item", text: "ignored after the end" });
    expect((await following).map((e) => e.seq)).toEqual([2, 3, 4]);
    expect(hub.owner("run_1")).toBe("key_a");
    await hub.close();
  });

  it("follows a long live stream with one abort listener on the caller's signal, removed at the end", async () => {
    const hub = new StreamHub({ retainMs: 60_000 });
    const writer = hub.open("run_long", "key_a");
    const controller = new AbortController();
    const added: string[] = [];
    const removed: string[] = [];
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...args: Parameters<AbortSignal["addEventListener"]>) => (added.push(args[0]), add(...args))) as never;
    controller.signal.removeEventListener = ((...args: Parameters<AbortSignal["removeEventListener"]>) => (removed.push(args[0]), remove(...args))) as never;
    const seen: number[] = [];
    const following = (async () => {
      for await (const batch of hub.followBatches("run_long", 0, controller.signal)) seen.push(...batch.map((e) => e.seq));
    })();
    // Each item waits for the follower to have taken the last: the follower waits 200 times.
    for (let i = 0; i < 200; i++) {
      writer.push({ kind: "item", text: "x" });
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
    }
    writer.push({ kind: "done", payload: { runId: "run_long", object: {}, metadata: {} as never } });
    await following;
    expect(seen).toEqual(Array.from({ length: 201 }, (_, i) => i + 1));
    expect(added).toEqual(["abort"]);
    expect(removed).toEqual(["abort"]);
    await hub.close();
  });

  it("forgets ended runs after the retention time", async () => {
    let now = 0;
    const hub = new StreamHub({ retainMs: 1_000, now: () => now });
    hub.open("run_1", "k").end();
    hub.open("run_2", "k");
    now = 1_000;
    await hub.sweep();
    expect(hub.owner("run_1")).toBeNull();
    expect(hub.owner("run_2")).toBe("k"); // still running
    await hub.close();
  });
});

describe("StreamHub over shared storage", () => {
  const at = new Date().toISOString();
  const setup = async () => {
    const store = openSqliteStore(mkdtempSync(path.join(os.tmpdir(), "genserve-hub-")));
    await store.keys.insert({ id: "key_a", name: "a", hash: "a".repeat(64), prefix: "gs_a", admin: false, role: "editor" as const, projectId: "prj_default", createdAt: at, lastUsedAt: null, revokedAt: null, webhookSecret: "whsec_a", limits: NO_LIMITS });
    await store.runs.insert({ id: "run_1", operation: "stream.object", workflowSlug: "w", keyId: "key_a", input: "x", schema: {}, contextSlugs: [], attachments: [], callback: null, modelTag: "m", createdAt: at });
    const shared = { store, flushMs: 5, pollMs: 100, log: () => undefined };
    // Two processes' hubs on one store: `streaming` runs the stream, `other` only follows it.
    const streaming = new StreamHub({ retainMs: 60_000, shared });
    const other = new StreamHub({ retainMs: 60_000, shared });
    await streaming.start();
    await other.start();
    return { store, streaming, other, close: async () => (await streaming.close(), await other.close(), await store.close()) };
  };

  it("lets another process follow a stream from a sequence number to its final event, in order", async () => {
    const { streaming, other, close } = await setup();
    const writer = streaming.open("run_1", "key_a");
    writer.push({ kind: "item", text: "{" });
    writer.push({ kind: "item", text: '"a"' });
    await new Promise((r) => setTimeout(r, 30));
    expect(other.holds("run_1")).toBe(false);
    const following = collect(other.follow("run_1", 1));
    for (let i = 0; i < 300; i++) writer.push({ kind: "item", text: " " });
    writer.push({ kind: "done", payload: { runId: "run_1", object: { a: 1 }, metadata: {} as never } });
    const seen = await following;
    expect(seen.map((e) => e.seq)).toEqual(Array.from({ length: 302 }, (_, i) => i + 2));
    expect(seen.at(-1)).toMatchObject({ kind: "done", payload: { object: { a: 1 } } });
    await close();
  });

  it("gives another process a stream's field and restart events as they were, with their ids", async () => {
    const { streaming, other, close } = await setup();
    const writer = streaming.open("run_1", "key_a");
    const events = [
      { kind: "item", text: '{"a":1' },
      { kind: "field", attempt: 1, pointer: "/a", value: 1, valid: false },
      { kind: "restart", attempt: 2 },
      { kind: "item", text: '{"a":{"b~c":[null]}}' },
      { kind: "field", attempt: 2, pointer: "/a/b~0c/0", value: null, valid: null },
      { kind: "field", attempt: 2, pointer: "/a/b~0c", value: [null], valid: true },
      { kind: "field", attempt: 2, pointer: "/a", value: { "b~c": [null] }, valid: true },
      { kind: "field", attempt: 2, pointer: "", value: { a: { "b~c": [null] } }, valid: true },
      { kind: "done", payload: { runId: "run_1", object: { a: { "b~c": [null] } }, metadata: {} as never } },
    ] as const;
    for (const event of events) writer.push(event);
    const seen = await collect(other.follow("run_1", 0));
    expect(other.holds("run_1")).toBe(false);
    expect(seen).toEqual(events.map((event, i) => ({ ...event, seq: i + 1 })));
    await close();
  });

  it("ends a follower's stream without a final event once the run ended elsewhere without one (its process died)", async () => {
    const { store, streaming, other, close } = await setup();
    streaming.open("run_1", "key_a").push({ kind: "item", text: "{" });
    await new Promise((r) => setTimeout(r, 30));
    const following = collect(other.follow("run_1", 0));
    await store.runs.finish("run_1", { status: "failed", output: null, error: null, modelName: null, modelTag: "m", decoding: null, warnings: [], inputTokens: 0, outputTokens: 0, cost: "0", durationMs: 1, attempts: 1, finishedAt: at });
    expect((await following).map((e) => e.kind)).toEqual(["item"]);
    await close();
  });
});
