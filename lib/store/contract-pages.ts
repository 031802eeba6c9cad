import "server-only";
import { beforeEach, describe, expect, it } from "vitest";
import type { NewRun, RunListBounds, Store } from "./store-types";

/** Lists as the API reads them by default (limits.runPreviewChars, runSearchChars, runSearchBytes). */
export const BOUNDS: RunListBounds = { previewChars: 2_048, searchChars: 16_384, searchBytes: 64 * 1024 * 1024 };

/** A text run of `keyId`'s, created at the contracts' fixed time, without a callback; `extra` overrides. */
export const newRun = (keyId: string, id: string, extra: Partial<NewRun> = {}): NewRun => ({
  id,
  operation: "generate.text",
  workflowSlug: "w",
  keyId,
  input: "x",
  schema: null,
  contextSlugs: [],
  attachments: [],
  callback: null,
  modelTag: "m",
  createdAt: new Date(Date.UTC(2026, 10, 23)).toISOString(),
  ...extra,
});

/**
 * The bounded reads of the storage contract (issue 31), on every backend through `storeContract`:
 * a thread's size, its pages and a run's history are measured without reading it whole, and a run
 * list carries previews and searches within a bound of bytes per call.
 */
export function pagesContract(current: () => { store: Store; keyId: string }) {
  let store: Store;
  let keyId: string;
  const at = (ms: number) => new Date(Date.UTC(2026, 10, 23, 0, 0, 0, ms)).toISOString();
  beforeEach(() => void ({ store, keyId } = current()));
  const run = (id: string, input: string, extra: Partial<NewRun> = {}): NewRun => newRun(keyId, id, { input, ...extra });
  const finish = (id: string, output: unknown, error: Record<string, unknown> | null = null) =>
    store.runs.finish(id, { status: error ? "failed" : "succeeded", output, error: error as never, modelName: "m1", modelTag: "m", decoding: null, warnings: [], inputTokens: 1, outputTokens: 1, cost: "0", durationMs: 1, attempts: 1, finishedAt: at(9) });

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

    it("lists runs as previews: inputs cut in SQL with their size, large schemas, outputs and callbacks left out, short ones whole", async () => {
      const long = `${"é".repeat(50)}${"x".repeat(5_000)}`;
      await store.runs.insert(run("run_01L1", long, { schema: { type: "object", description: "s".repeat(500) }, callback: { url: "https://example.com/h", customProperties: { big: "p".repeat(500) } } }));
      await finish("run_01L1", "y".repeat(400) + '"\\');
      await store.runs.insert(run("run_01L2", "short", { schema: { type: "object" }, callback: { url: "https://example.com/h" } }));
      await finish("run_01L2", { a: 1 });
      await store.runs.insert(run("run_01L3", "failed"));
      await finish("run_01L3", null, { type: "t", title: "t", status: 502, detail: "d", code: "output_invalid", lastOutput: "z".repeat(1_000) });
      const bounds = { ...BOUNDS, previewChars: 100 };
      const { runs, scannedTo } = await store.runs.list({ keyId, limit: 10 }, bounds);
      expect(scannedTo).toBeNull();
      const [failed, short, large] = runs;
      expect(large).toMatchObject({ id: "run_01L1", input: long.slice(0, 100), inputBytes: 5_100, schema: null, output: null, callback: null, truncated: ["input", "schema", "output", "callback"] });
      // A string output previews as its text.
      expect(large!.outputPreview).toBe("y".repeat(99));
      expect(large!.outputBytes).toBe(JSON.stringify("y".repeat(400) + '"\\').length);
      expect(short).toMatchObject({ input: "short", inputBytes: 5, schema: { type: "object" }, output: { a: 1 }, outputPreview: '{"a":1}', callback: { url: "https://example.com/h" }, truncated: [] });
      expect(failed!.error).toEqual({ type: "t", title: "t", status: 502, detail: "d", code: "output_invalid" });
      expect(failed!.outputPreview).toBeNull();
      // The run itself is whole.
      expect((await store.runs.get("run_01L1"))!.input).toBe(long);
    });

    it("searches the start of each input within a bound of bytes per call, handing back where it stopped", async () => {
      // Seven runs of 4,000 bytes, the term only in the oldest; a call may read 10,000 bytes: two runs.
      for (let i = 1; i <= 7; i++) await store.runs.insert(run(`run_01P${i}`, `${i === 1 ? "needle " : ""}${"h".repeat(4_000 - (i === 1 ? 7 : 0))}`));
      const bounds = { ...BOUNDS, searchBytes: 10_000 };
      const calls: { runs: string[]; scannedTo: string | null }[] = [];
      let beforeId: string | undefined;
      do {
        const page = await store.runs.list({ keyId, search: "NEEDLE", beforeId, limit: 10 }, bounds);
        calls.push({ runs: page.runs.map((r) => r.id), scannedTo: page.scannedTo });
        beforeId = page.scannedTo ?? undefined;
      } while (beforeId !== undefined && calls.length < 10);
      expect(calls).toEqual([
        { runs: [], scannedTo: "run_01P6" },
        { runs: [], scannedTo: "run_01P4" },
        { runs: [], scannedTo: "run_01P2" },
        { runs: ["run_01P1"], scannedTo: null },
      ]);
      // Only the first searchChars characters of an input are searched.
      await store.runs.insert(run("run_01P8", `${"h".repeat(300)} far`));
      expect((await store.runs.list({ keyId, search: "far", limit: 10 }, { ...BOUNDS, searchChars: 200 })).runs).toEqual([]);
      expect((await store.runs.list({ keyId, search: "far", limit: 10 }, { ...BOUNDS, searchChars: 400 })).runs.map((r) => r.id)).toEqual(["run_01P8"]);
      // A run id is looked up, whatever the bound.
      const id = "run_01ARZ3NDEKTSV4RRFFQ69G5FAV";
      await store.runs.insert(run(id, "old"));
      for (let i = 0; i < 3; i++) await store.runs.insert(run(`run_01Z${i}`, "h".repeat(4_000)));
      expect(await store.runs.list({ keyId, search: id, limit: 10 }, bounds)).toMatchObject({ runs: [{ id }], scannedTo: null });
    });
  });
}
