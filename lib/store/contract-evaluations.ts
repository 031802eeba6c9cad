import "server-only";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NO_LIMITS } from "../domain/key-limits";
import type { NewEvaluation, Store } from "./store-types";

/** How a backend opens stores for the contract (as `storeContract` takes them). */
export interface ContractStores {
  first(): Promise<Store>;
  second(): Promise<Store>;
  another(): Promise<Store>;
  /** A store on a fresh database that had migrations up to `version` applied and then `seed` run (an older install upgraded). */
  upgraded?(version: number, seed: readonly string[]): Promise<Store>;
  cleanup?(): Promise<void>;
}

/**
 * The storage contract of suites' evaluations, run against every backend beside `storeContract`:
 * claims under leases, keys taking turns for evaluation slots, the cap on a key's queued
 * evaluations, and suite snapshots stored once per version (also through an export and import).
 */
export function evaluationContract(name: string, open: ContractStores) {
  let store: Store;
  let keyId: string;
  const at = (ms: number) => new Date(Date.UTC(2026, 10, 23, 0, 0, 0, ms)).toISOString();
  const key = (id: string) => ({ id, name: "k", hash: id.padEnd(64, "h"), prefix: "gs_k", admin: false, role: "editor" as const, projectId: "prj_default", createdAt: at(0), lastUsedAt: null, revokedAt: null, webhookSecret: "whsec_test", limits: NO_LIMITS });
  const event = (id: string, runId: string) => ({ id, runId, keyId, url: "https://example.com/h", headers: { "X-A": "1" }, payload: "{}", nextAttemptAt: at(0), createdAt: at(0) });
  describe(`${name} store: evaluations`, () => {
    // Inside the describe: the hooks of `storeContract` beside it are its own.
    beforeEach(async () => {
      store = await open.first();
      keyId = "key_contract";
      await store.keys.insert(key(keyId));
    });
    afterEach(async () => {
      await store.close();
      await open.cleanup?.();
    });

    it("claims an evaluation once, records case results only under its lease, cancels it, and finishes it with its event once", async () => {
      const evaluation = (id: string) => ({ id, suiteSlug: "s", suiteVersion: 3, keyId, target: { workflowSlug: "w", repeat: 2 }, snapshotId: "snap_s3", createdAt: at(0) });
      await store.evaluations.insert(evaluation("eval_01A"));
      await store.evaluations.insert(evaluation("eval_01B"));
      const other = await open.second();
      try {
        const [a, b] = await Promise.all([store.evaluations.claim(at(1), { owner: "p1", until: at(1000) }), other.evaluations.claim(at(1), { owner: "p2", until: at(1000) })]);
        expect([a?.id, b?.id].sort()).toEqual(["eval_01A", "eval_01B"]);
        const mine = a!.id === "eval_01A" ? "p1" : "p2";
        const theirs = mine === "p1" ? "p2" : "p1";
        expect(await store.evaluations.claim(at(2), { owner: "p3", until: at(1000) })).toBeNull();
        const item = (caseIndex: number, repeat: number) => ({ caseIndex, repeat, runId: `run_${caseIndex}_${repeat}`, status: "passed" as const, output: { n: 1 }, checks: [{ path: "/n", pass: true }], error: null, durationMs: 12, inputTokens: 3, outputTokens: 4, cost: "0.001", createdAt: at(3) });
        expect(await store.evaluations.recordItem("eval_01A", mine, item(0, 0))).toBe(true);
        expect(await store.evaluations.recordItem("eval_01A", theirs, item(1, 0))).toBe(false);
        // The same case and repeat again (a retry after a crash): the first result stays.
        expect(await store.evaluations.recordItem("eval_01A", mine, { ...item(0, 0), status: "failed" })).toBe(true);
        expect(await store.evaluations.recordItem("eval_01A", mine, item(0, 1))).toBe(true);
        const items = await store.evaluations.items("eval_01A");
        expect(items.map((i) => [i.caseIndex, i.repeat, i.status])).toEqual([[0, 0, "passed"], [0, 1, "passed"]]);
        expect(items[0]).toMatchObject({ runId: "run_0_0", output: { n: 1 }, checks: [{ path: "/n", pass: true }], durationMs: 12, inputTokens: 3, outputTokens: 4, cost: "0.001" });
        expect((await store.evaluations.items("eval_01A", items[0]!.seq)).map((i) => i.repeat)).toEqual([1]);

        // A lease that ran out: another process takes the evaluation over, with its results so far.
        expect(await store.evaluations.renewLeases(mine, ["eval_01A"], at(500))).toEqual(["eval_01A"]);
        const taken = await other.evaluations.claim(at(600), { owner: "p9", until: at(5000) });
        expect(taken).toMatchObject({ id: "eval_01A", status: "running", startedAt: at(1), target: { workflowSlug: "w", repeat: 2 }, snapshotId: "snap_s3" });
        expect(await store.evaluations.renewLeases(mine, ["eval_01A"], at(700))).toEqual([]);
        expect(await store.evaluations.recordItem("eval_01A", mine, item(1, 0))).toBe(false);

        const evt = { ...event("evt_eval_01A", "eval_01A"), payload: '{"type":"evaluation.completed"}' };
        const done = { status: "completed" as const, summary: { passRate: 1 }, error: null, finishedAt: at(900) };
        expect(await store.evaluations.finish("eval_01A", mine, done, evt)).toBe(false);
        expect(await store.events.forRun("eval_01A")).toBeNull();
        expect(await store.evaluations.finish("eval_01A", "p9", done, evt)).toBe(true);
        expect(await store.evaluations.finish("eval_01A", "p9", done, evt)).toBe(false);
        expect((await store.events.forRun("eval_01A"))?.payload).toBe('{"type":"evaluation.completed"}');
        expect(await store.evaluations.get("eval_01A")).toMatchObject({ status: "completed", summary: { passRate: 1 }, finishedAt: at(900) });

        expect(await store.evaluations.cancel("eval_01A", at(950))).toBe(false);
        expect(await store.evaluations.cancel("eval_01B", at(950))).toBe(true);
        expect(await store.evaluations.recordItem("eval_01B", theirs, item(0, 0))).toBe(false);
        expect((await store.evaluations.get("eval_01B"))?.status).toBe("cancelled");
        expect((await store.evaluations.list({ suiteSlug: "s", limit: 10 })).map((e) => e.id)).toEqual(["eval_01B", "eval_01A"]);
        expect((await store.evaluations.list({ status: "completed", keyId, limit: 10 })).map((e) => e.id)).toEqual(["eval_01A"]);
        expect((await store.evaluations.list({ beforeId: "eval_01B", limit: 10 })).map((e) => e.id)).toEqual(["eval_01A"]);

        // A process that owns the store alone frees every lease at start.
        await store.evaluations.insert(evaluation("eval_01C"));
        expect((await store.evaluations.claim(at(1000), { owner: "p1", until: at(999_999) }))?.id).toBe("eval_01C");
        await store.evaluations.releaseLeases();
        expect((await store.evaluations.claim(at(1001), { owner: "p2", until: at(999_999) }))?.id).toBe("eval_01C");
      } finally {
        await other.close();
      }
    });

    it("stores a suite's document once per suite, version and document, however many evaluations run it", async () => {
      const snapshot = { id: "snap_1", suiteSlug: "s", suiteVersion: 1, document: { suite: "s", cases: [{ name: "a", input: "x" }] }, createdAt: at(0) };
      expect(await store.evaluations.saveSnapshot(snapshot)).toBe("snap_1");
      // The same version again (a second evaluation of it): the stored copy, nothing written.
      expect(await store.evaluations.saveSnapshot({ ...snapshot, id: "snap_2", createdAt: at(5) })).toBe("snap_1");
      // A new version, or the same number with another document (the suite deleted and made again): a copy of its own.
      expect(await store.evaluations.saveSnapshot({ ...snapshot, id: "snap_3", suiteVersion: 2 })).toBe("snap_3");
      expect(await store.evaluations.saveSnapshot({ ...snapshot, id: "snap_4", document: { suite: "s", cases: [] } })).toBe("snap_4");
      expect(await store.evaluations.snapshot("snap_1")).toEqual(snapshot);
      expect(await store.evaluations.snapshot("snap_2")).toBeNull();

      const evaluation = (id: string, snapshotId: string): NewEvaluation => ({ id, suiteSlug: "s", suiteVersion: 1, keyId, target: { workflowSlug: "w" }, snapshotId, createdAt: at(1) });
      for (const id of ["eval_01A", "eval_01B"]) expect(await store.evaluations.insert(evaluation(id, await store.evaluations.saveSnapshot({ ...snapshot, id: `snap_${id}` })))).toBe(true);
      const [a, b] = [await store.evaluations.get("eval_01A"), await store.evaluations.get("eval_01B")];
      expect([a?.snapshotId, b?.snapshotId]).toEqual(["snap_1", "snap_1"]);
      // The evaluation's row holds no copy of the suite.
      expect(JSON.stringify(a)).not.toContain("cases");
    });

    it("caps the evaluations a key has queued: past the cap nothing is stored; a claim frees a place", async () => {
      await store.keys.insert(key("key_other"));
      const evaluation = (id: string, owner = keyId): NewEvaluation => ({ id, suiteSlug: "s", suiteVersion: 1, keyId: owner, target: {}, snapshotId: "snap_1", createdAt: at(0) });
      expect(await store.evaluations.insert(evaluation("eval_01A"), { maxQueued: 2 })).toBe(true);
      expect(await store.evaluations.insert(evaluation("eval_01B"), { maxQueued: 2 })).toBe(true);
      expect(await store.evaluations.insert(evaluation("eval_01C"), { maxQueued: 2 })).toBe(false);
      expect(await store.evaluations.get("eval_01C")).toBeNull();
      // Another key's queue is its own.
      expect(await store.evaluations.insert(evaluation("eval_01D", "key_other"), { maxQueued: 2 })).toBe(true);
      expect((await store.evaluations.claim(at(1), { owner: "p1", until: at(1000) }))?.id).toBe("eval_01A");
      expect(await store.evaluations.insert(evaluation("eval_01C"), { maxQueued: 2 })).toBe(true);
    });

    it("lets keys take turns for evaluation slots: fewest running first, then the key served longest ago, then its oldest", async () => {
      await store.keys.insert(key("key_b"));
      const evaluation = (id: string, owner: string): NewEvaluation => ({ id, suiteSlug: "s", suiteVersion: 1, keyId: owner, target: {}, snapshotId: "snap_1", createdAt: at(0) });
      // Key A queued three before key B queued two (ids sort by creation).
      for (const id of ["eval_01A1", "eval_01A2", "eval_01A3"]) await store.evaluations.insert(evaluation(id, keyId));
      for (const id of ["eval_01B1", "eval_01B2"]) await store.evaluations.insert(evaluation(id, "key_b"));
      const other = await open.second();
      try {
        let now = 10;
        const claim = async (via = store) => (await via.evaluations.claim(at(++now), { owner: "p1", until: at(100_000) }))?.id;
        // First come first served would give A1, A2, A3 before B1: B1 goes second, as A has one running.
        expect(await claim()).toBe("eval_01A1");
        expect(await claim(other)).toBe("eval_01B1");
        // One running each: A, served longest ago, goes next; then B (A has two running).
        expect(await claim()).toBe("eval_01A2");
        expect(await claim(other)).toBe("eval_01B2");
        expect(await claim()).toBe("eval_01A3");
        expect(await claim()).toBeUndefined();
        for (const id of ["eval_01A1", "eval_01A2", "eval_01A3", "eval_01B1", "eval_01B2"]) {
          expect(await store.evaluations.finish(id, "p1", { status: "completed", summary: null, error: null, finishedAt: at(++now) })).toBe(true);
        }
        // Nothing running: A's last claim (A3) came after B's (B2), so B goes first although A queued first.
        await store.evaluations.insert(evaluation("eval_01A4", keyId));
        await store.evaluations.insert(evaluation("eval_01B3", "key_b"));
        expect(await claim()).toBe("eval_01B3");
        expect(await claim()).toBe("eval_01A4");
      } finally {
        await other.close();
      }
    });

    it("puts an evaluation back in the queue only for the process that holds it, results kept, and says whether another key waits", async () => {
      await store.keys.insert(key("key_b"));
      const evaluation = (id: string, owner: string): NewEvaluation => ({ id, suiteSlug: "s", suiteVersion: 1, keyId: owner, target: {}, snapshotId: "snap_1", createdAt: at(0) });
      await store.evaluations.insert(evaluation("eval_01A", keyId));
      expect((await store.evaluations.claim(at(1), { owner: "p1", until: at(1000) }))?.id).toBe("eval_01A");
      expect(await store.evaluations.othersQueued(keyId)).toBe(false);
      await store.evaluations.insert(evaluation("eval_01B", "key_b"));
      expect(await store.evaluations.othersQueued(keyId)).toBe(true);
      expect(await store.evaluations.othersQueued("key_b")).toBe(false);
      const item = { caseIndex: 0, repeat: 0, runId: "run_1", status: "passed" as const, output: null, checks: [], error: null, durationMs: 1, inputTokens: 0, outputTokens: 0, cost: "0", createdAt: at(2) };
      expect(await store.evaluations.recordItem("eval_01A", "p1", item)).toBe(true);
      expect(await store.evaluations.requeue("eval_01A", "p2")).toBe(false);
      expect(await store.evaluations.requeue("eval_01A", "p1")).toBe(true);
      expect(await store.evaluations.get("eval_01A")).toMatchObject({ status: "queued", startedAt: at(1) });
      expect(await store.evaluations.recordItem("eval_01A", "p1", { ...item, caseIndex: 1 })).toBe(false);
      expect(await store.evaluations.items("eval_01A")).toHaveLength(1);
      // B's key has nothing running and was never served: B goes first.
      expect((await store.evaluations.claim(at(3), { owner: "p1", until: at(1000) }))?.id).toBe("eval_01B");
      expect((await store.evaluations.claim(at(4), { owner: "p1", until: at(1000) }))).toMatchObject({ id: "eval_01A", startedAt: at(1) });
    });

    it("exports snapshots and the evaluations that point at them, and imports an older export's copies as snapshots", async () => {
      const document = { suite: "s", cases: [{ name: "a", input: "x" }] };
      const snapshotId = await store.evaluations.saveSnapshot({ id: "snap_1", suiteSlug: "s", suiteVersion: 1, document, createdAt: at(0) });
      await store.evaluations.insert({ id: "eval_01A", suiteSlug: "s", suiteVersion: 1, keyId, target: { workflowSlug: "w" }, snapshotId, createdAt: at(0) });
      const exported = async function* () {
        for (const table of ["api_keys", "suite_snapshots", "evaluations"] as const) for await (const row of store.transfer.rows(table)) yield { table, row };
      };
      const target = await open.another();
      try {
        expect(await target.transfer.load(exported())).toMatchObject({ suite_snapshots: 1, evaluations: 1 });
        expect(await target.evaluations.get("eval_01A")).toEqual(await store.evaluations.get("eval_01A"));
        expect((await target.evaluations.snapshot("snap_1"))?.document).toEqual(document);
      } finally {
        await target.close();
      }
      // An export made before snapshots: each evaluation held its own copy of the suite.
      const legacy = (id: string, doc: unknown) => ({
        table: "evaluations" as const,
        row: { id, suite_slug: "s", suite_version: 1, key_id: keyId, status: "completed", target_json: "{}", document: JSON.stringify(doc), summary_json: null, error_json: null, created_at: at(1), started_at: at(2), finished_at: at(3), lease_owner: null, lease_until: null },
      });
      const older = async function* () {
        for await (const row of store.transfer.rows("api_keys")) yield { table: "api_keys" as const, row };
        yield legacy("eval_01L1", document);
        yield legacy("eval_01L2", document);
        yield legacy("eval_01L3", { ...document, description: "made again" });
      };
      const upgraded = await open.another();
      try {
        expect(await upgraded.transfer.load(older())).toMatchObject({ suite_snapshots: 2, evaluations: 3 });
        const ids = await Promise.all(["eval_01L1", "eval_01L2", "eval_01L3"].map(async (id) => (await upgraded.evaluations.get(id))?.snapshotId));
        expect(ids).toEqual(["snap_eval_01L1", "snap_eval_01L1", "snap_eval_01L3"]);
        expect((await upgraded.evaluations.snapshot("snap_eval_01L3"))?.document).toEqual({ ...document, description: "made again" });
        expect(await upgraded.evaluations.get("eval_01L2")).toMatchObject({ status: "completed", startedAt: at(2), finishedAt: at(3) });
      } finally {
        await upgraded.close();
      }
    });

    it.runIf(open.upgraded !== undefined)("converts evaluations that held their own copy of the suite into shared snapshots when migrating (19), losing nothing", async () => {
      const documents = [JSON.stringify({ suite: "s", cases: [{ name: "a", input: "x" }] }), JSON.stringify({ suite: "s", cases: [{ name: "b", input: "y" }] })];
      const row = (id: string, version: number, document: string, status: string) =>
        `INSERT INTO evaluations (id, suite_slug, suite_version, key_id, status, target_json, document, summary_json, created_at, started_at)
         VALUES ('${id}', 's', ${version}, 'key_old', '${status}', '{"workflowSlug":"w"}', '${document}', '{"passRate":1}', '${at(1)}', '${at(2)}')`;
      const store18 = await open.upgraded!(18, [
        `INSERT INTO api_keys (id, name, hash, prefix, admin, created_at) VALUES ('key_old', 'k', '${"o".repeat(64)}', 'gs_k', FALSE, '${at(0)}')`,
        row("eval_01L1", 1, documents[0]!, "completed"),
        row("eval_01L2", 1, documents[0]!, "queued"),
        // The same version number with another document: the suite was deleted and made again.
        row("eval_01L3", 1, documents[1]!, "completed"),
        row("eval_01L4", 2, documents[1]!, "completed"),
        `INSERT INTO evaluation_items (evaluation_id, case_index, repeat_index, run_id, status, checks_json, created_at) VALUES ('eval_01L1', 0, 0, 'run_1', 'passed', '[]', '${at(3)}')`,
      ]);
      try {
        const snapshots = await Promise.all(["eval_01L1", "eval_01L2", "eval_01L3", "eval_01L4"].map(async (id) => (await store18.evaluations.get(id))!.snapshotId));
        expect(snapshots).toEqual(["snap_eval_01L1", "snap_eval_01L1", "snap_eval_01L3", "snap_eval_01L4"]);
        expect((await store18.evaluations.snapshot("snap_eval_01L1"))?.document).toEqual(JSON.parse(documents[0]!));
        expect((await store18.evaluations.snapshot("snap_eval_01L3"))?.document).toEqual(JSON.parse(documents[1]!));
        expect(await store18.evaluations.get("eval_01L1")).toMatchObject({ status: "completed", summary: { passRate: 1 }, target: { workflowSlug: "w" }, startedAt: at(2) });
        expect((await store18.evaluations.items("eval_01L1")).map((i) => i.runId)).toEqual(["run_1"]);
        const rows = [];
        for await (const r of store18.transfer.rows("evaluations")) rows.push(r);
        expect(rows.every((r) => !("document" in r))).toBe(true);
        // Evaluations queued before the upgrade run as any other: the one queued is claimed.
        expect((await store18.evaluations.claim(at(5), { owner: "p1", until: at(1000) }))?.id).toBe("eval_01L2");
        // New evaluations of a version an older one ran share its snapshot.
        expect(await store18.evaluations.saveSnapshot({ id: "snap_new", suiteSlug: "s", suiteVersion: 2, document: JSON.parse(documents[1]!) as Record<string, unknown>, createdAt: at(6) })).toBe("snap_eval_01L4");
      } finally {
        await store18.close();
      }
    });
  });
}
