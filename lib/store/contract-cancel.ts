import "server-only";
import { beforeEach, describe, expect, it } from "vitest";
import { BOUNDS, newRun } from "./contract-pages";
import type { NewRun, Store } from "./store-types";

/**
 * Cancelling a run through the store (issue 32), on every backend through `storeContract`: the
 * request is recorded on an unfinished run only, the first time stands, listeners are told, and a
 * heartbeat on another handle (another process, as a replica would be) finds it. That other
 * PostgreSQL processes are told too is checked by test/http/replicas-cancel.test.ts.
 */
export function cancelContract(current: () => { store: Store; keyId: string }, second: () => Promise<Store>) {
  let store: Store;
  let keyId: string;
  const at = (ms: number) => new Date(Date.UTC(2026, 10, 23, 0, 0, 0, ms)).toISOString();
  beforeEach(() => void ({ store, keyId } = current()));
  const run = (id: string, extra: Partial<NewRun> = {}): NewRun => newRun(keyId, id, extra);
  const outcome = { status: "succeeded" as const, output: "done", error: null, modelName: "m1", modelTag: "m", decoding: null, warnings: [], inputTokens: 1, outputTokens: 1, cost: "0", durationMs: 1, attempts: 1, finishedAt: at(10) };

  describe("run cancellation", () => {
    it("records a cancel on running and queued runs only, tells listeners, and another process's heartbeat check finds it", async () => {
      await store.runs.insert(run("run_01C1", { status: "running", lease: { owner: "p1", until: at(9_000) } }));
      await store.runs.insert(run("run_01C2", { status: "running", lease: { owner: "p1", until: at(9_000) } }));
      await store.runs.insert(run("run_01C3", { status: "queued", request: { input: "q" } }));
      await store.runs.insert(run("run_01C4", { status: "running", lease: { owner: "p1", until: at(9_000) } }));
      await store.runs.finish("run_01C4", outcome);
      const other = await second();
      const heard: string[] = [];
      const listener = await store.runs.listenCancels((id) => heard.push(id), () => undefined);
      try {
        expect(await store.runs.cancelRequested(["run_01C1", "run_01C2"])).toEqual([]);
        expect(await store.runs.requestCancel("run_01C1", at(100))).toBe(true);
        // Asked again (a second click, another replica): still unfinished, the first time stands.
        expect(await store.runs.requestCancel("run_01C1", at(200))).toBe(true);
        expect(await store.runs.requestCancel("run_01C3", at(300))).toBe(true);
        // Ended, or missing: nothing to cancel, nobody told.
        expect(await store.runs.requestCancel("run_01C4", at(400))).toBe(false);
        expect(await store.runs.requestCancel("run_missing", at(400))).toBe(false);
        // Of the runs a process executes, those to stop: running and asked for (not the queued one).
        expect(await other.runs.cancelRequested(["run_01C1", "run_01C2", "run_01C3", "run_01C4", "run_missing"])).toEqual(["run_01C1"]);
        expect(await other.runs.cancelRequested([])).toEqual([]);
        const until = Date.now() + 5_000;
        while (heard.length < 3 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
        expect([...heard].sort()).toEqual(["run_01C1", "run_01C1", "run_01C3"]);
        // Once it ended (cancelled), the check no longer names it.
        await store.runs.finish("run_01C1", { ...outcome, status: "cancelled", output: null, error: { type: "t", title: "t", status: 499, detail: "d", code: "cancelled" } });
        expect(await store.runs.cancelRequested(["run_01C1"])).toEqual([]);
        // Stored and listed as `cancelled`, its problem kept; a second cancel finds it ended.
        expect(await store.runs.get("run_01C1")).toMatchObject({ status: "cancelled", error: { code: "cancelled" } });
        expect((await store.runs.list({ keyId, status: "cancelled", limit: 10 }, BOUNDS)).runs.map((r) => r.id)).toEqual(["run_01C1"]);
        expect(await store.runs.requestCancel("run_01C1", at(500))).toBe(false);
      } finally {
        await listener.close();
        await other.close();
      }
    });
  });
}
