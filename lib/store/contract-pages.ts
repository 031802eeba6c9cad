import "server-only";
import { beforeEach, describe, expect, it } from "vitest";
import type { Store } from "./types";

/**
 * The bounded reads of the storage contract (issue 31), on every backend through `storeContract`:
 * a thread's size, its pages and a run's history are measured without reading it whole.
 */
export function pagesContract(current: () => { store: Store; keyId: string }) {
  let store: Store;
  let keyId: string;
  const at = (ms: number) => new Date(Date.UTC(2026, 10, 23, 0, 0, 0, ms)).toISOString();
  beforeEach(() => void ({ store, keyId } = current()));
  describe("bounded reads", () => {
    it("measures a thread in UTF-8 bytes, pages it within a byte bound either way, and cuts a larger message to it", async () => {
      await store.threads.create({ id: "t", keyId, workflowSlug: "w", createdAt: at(0), updatedAt: at(0) });
      // 10, 20 (2-byte characters), 300, 40 and 50 bytes.
      const contents = ["a".repeat(10), "é".repeat(10), "b".repeat(300), "c".repeat(40), "d".repeat(50)];
      await store.threads.append(keyId, "t", contents.map((content, i) => ({ role: i % 2 ? "assistant" : "user", content, runId: `run_${i}`, createdAt: at(i) })), at(5));
      expect(await store.threads.get(keyId, "t")).toMatchObject({ messageCount: 5, bytes: 420 });

      const first = await store.threads.page(keyId, "t", { order: "asc", limit: 10, maxBytes: 100 });
      expect(first.messages.map((m) => [m.content, m.bytes, m.truncated])).toEqual([
        ["a".repeat(10), 10, false],
        ["é".repeat(10), 20, false],
      ]);
      expect(first.more).toBe(true);
      // The 300-byte message alone, cut to the page's 100 bytes.
      const second = await store.threads.page(keyId, "t", { order: "asc", from: first.messages[1]!.seq, limit: 10, maxBytes: 100 });
      expect(second.messages.map((m) => [m.content, m.bytes, m.truncated, m.runId])).toEqual([["b".repeat(100), 300, true, "run_2"]]);
      const third = await store.threads.page(keyId, "t", { order: "asc", from: second.messages[0]!.seq, limit: 10, maxBytes: 100 });
      expect(third.messages.map((m) => m.content)).toEqual(["c".repeat(40), "d".repeat(50)]);
      expect(third.more).toBe(false);
      // Newest first, and by count.
      const newest = await store.threads.page(keyId, "t", { order: "desc", limit: 1, maxBytes: 1_000 });
      expect([newest.messages.map((m) => m.content), newest.more]).toEqual([["d".repeat(50)], true]);
      const older = await store.threads.page(keyId, "t", { order: "desc", from: newest.messages[0]!.seq, limit: 2, maxBytes: 1_000 });
      expect(older.messages.map((m) => m.bytes)).toEqual([40, 300]);
      // A cut never splits a character.
      await store.threads.append(keyId, "t", [{ role: "user", content: "é".repeat(100), runId: null, createdAt: at(6) }], at(6));
      const cut = await store.threads.page(keyId, "t", { order: "desc", limit: 1, maxBytes: 25 });
      expect(cut.messages[0]).toMatchObject({ content: "é".repeat(12), bytes: 200, truncated: true });
      // Another key's thread of the same id is not this one.
      expect(await store.threads.page("key_other", "t", { order: "asc", limit: 10, maxBytes: 1_000 })).toEqual({ messages: [], more: false });
      expect(await store.threads.get("key_other", "t")).toBeNull();
    });

    it("gives a run the newest messages within a byte bound, oldest first, whole", async () => {
      await store.threads.create({ id: "h", keyId, workflowSlug: "w", createdAt: at(0), updatedAt: at(0) });
      const sizes = [500, 30, 40, 50, 60];
      await store.threads.append(keyId, "h", sizes.map((n, i) => ({ role: i % 2 ? "assistant" : "user", content: String(i).repeat(n), runId: null, createdAt: at(i) })), at(5));
      expect((await store.threads.history(keyId, "h", 150)).map((m) => m.content.length)).toEqual([40, 50, 60]);
      expect((await store.threads.history(keyId, "h", 180)).map((m) => m.content.length)).toEqual([30, 40, 50, 60]);
      expect((await store.threads.history(keyId, "h", 10_000)).map((m) => m.content.length)).toEqual(sizes);
      // The newest alone is larger than the bound: nothing.
      expect(await store.threads.history(keyId, "h", 59)).toEqual([]);
      expect(await store.threads.history(keyId, "nope", 10_000)).toEqual([]);
    });
  });
}
