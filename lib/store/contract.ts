import "server-only";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NO_LIMITS } from "../domain/key-limits";
import { TRANSFER_TABLES } from "./migrations";
import { cancelContract } from "./contract-cancel";
import { BOUNDS, newRun, pagesContract } from "./contract-pages";
import type { NewRun, Store, TransferRow, TransferTable } from "./store-types";

/**
 * The storage contract, run against every backend (sqlite.test.ts, postgres.test.ts): every
 * operation a caller relies on, and the races between processes sharing one store. `open` gives a
 * fresh store and, for the races, a second handle on the same data (as another process would have).
 */
export function storeContract(name: string, open: { first(): Promise<Store>; second(): Promise<Store>; another(): Promise<Store>; cleanup?(): Promise<void> }) {
  let store: Store;
  let firstKeys: boolean[] = [];
  let keyId: string;
  const at = (ms: number) => new Date(Date.UTC(2026, 10, 23, 0, 0, 0, ms)).toISOString();
  const keyRow = (id: string) => ({ id, name: "k", hash: id.padEnd(64, "h"), prefix: "gs_k", admin: false, created_at: at(0), webhook_secret: "whsec_test" });
  const key = (id: string) => ({ id, name: "k", hash: id.padEnd(64, "h"), prefix: "gs_k", admin: false, role: "editor" as const, projectId: "prj_default", createdAt: at(0), lastUsedAt: null, revokedAt: null, webhookSecret: "whsec_test", limits: NO_LIMITS });
  // The contracts' run, with a callback (its event tests need one).
  const run = (id: string, extra: Partial<NewRun> = {}): NewRun => newRun(keyId, id, { callback: { url: "https://example.com/h", headers: { Authorization: "Bearer s" } }, ...extra });
  const outcome = { status: "succeeded" as const, output: { a: 1 }, error: null, modelName: "m1", modelTag: "m", decoding: "provider" as const, warnings: ["a draft-04 `id` was ignored"], inputTokens: 3, outputTokens: 4, cost: "0.1", durationMs: 5, attempts: 1, finishedAt: at(10) };
  const event = (id: string, runId: string) => ({ id, runId, keyId, url: "https://example.com/h", headers: { "X-A": "1" }, payload: "{}", nextAttemptAt: at(0), createdAt: at(0) });

  describe(`${name} store`, () => {
    // Inside the describe: other contracts run beside this one in the same file have their own.
    beforeEach(async () => {
      store = await open.first();
      // Two processes starting on an empty store both try to create the first key: one does.
      const other = await open.second();
      firstKeys = await Promise.all([store.keys.insertFirst(key("key_contract")), other.keys.insertFirst(key("key_contract_other"))]);
      await other.close();
      keyId = firstKeys[0] ? "key_contract" : "key_contract_other";
    });
    afterEach(async () => {
      await store.close();
      await open.cleanup?.();
    });

    it("creates the first key once, however many processes start together, and never again", async () => {
      expect(firstKeys.filter(Boolean)).toHaveLength(1);
      expect(await store.keys.insertFirst(key("key_later"))).toBe(false);
      await store.keys.insert(key("key_second"));
      expect((await store.keys.list()).map((k) => k.id).sort()).toEqual([keyId, "key_second"].sort());
    });

    it("stores a run, finishes it and queues its event in one step, and lists runs newest first by filter", async () => {
      await store.runs.insert(run("run_01A", { promptTokens: 12, outputTokenLimit: 30, contextVersions: { c: "config" } }));
      await store.runs.insert(run("run_01B", { operation: "stream.object", workflowSlug: "v" }));
      await store.runs.finish("run_01A", outcome, event("evt_1", "run_01A"));
      expect(await store.runs.get("run_01A")).toMatchObject({ status: "succeeded", output: { a: 1 }, warnings: ["a draft-04 `id` was ignored"], promptTokens: 12, outputTokenLimit: 30, contextVersions: { c: "config" }, callback: { headers: { Authorization: "Bearer s" } } });
      expect((await store.runs.list({ limit: 10 }, BOUNDS)).runs.map((r) => [r.id, r.warnings])).toEqual([["run_01B", []], ["run_01A", ["a draft-04 `id` was ignored"]]]);
      expect((await store.runs.list({ limit: 10, operation: "stream.object" }, BOUNDS)).runs.map((r) => r.id)).toEqual(["run_01B"]);
      expect((await store.runs.list({ limit: 10, beforeId: "run_01B" }, BOUNDS)).runs.map((r) => r.id)).toEqual(["run_01A"]);
      expect((await store.runs.list({ limit: 10, keyId: "key_other" }, BOUNDS)).runs.length).toBe(0);
      expect((await store.runs.list({ limit: 10, fromId: "run_01B" }, BOUNDS)).runs.map((r) => r.id)).toEqual(["run_01B"]);
      expect((await store.events.due(at(1), 10)).map((e) => e.id)).toEqual(["evt_1"]);
    });

    it("keeps a draft run's definition, in the run and in lists; other runs have none", async () => {
      const draft = { base: "3", definition: { model: "m", instructions: "Edited.", temperature: null, maxOutputTokens: 50, retries: 1, contexts: ["c"] }, changes: [{ name: "instructions", from: "Saved.", to: "Edited." }], instructionsDiff: ["-Saved.", "+Edited."] };
      await store.runs.insert(run("run_01D", { workflowVersion: "3", draft }));
      await store.runs.insert(run("run_01E"));
      expect(await store.runs.get("run_01D")).toMatchObject({ workflowVersion: "3", draft });
      expect((await store.runs.get("run_01E"))!.draft).toBeNull();
      expect((await store.runs.list({ limit: 10 }, BOUNDS)).runs.map((r) => [r.id, r.draft])).toEqual([["run_01E", null], ["run_01D", draft]]);
    });

    it("keeps a run's own history, oldest first; other runs and lists have none", async () => {
      const history = [
        { role: "user" as const, content: "What is six times seven?" },
        { role: "assistant" as const, content: "Let me think." },
      ];
      await store.runs.insert(run("run_01F", { history }));
      await store.runs.insert(run("run_01G"));
      expect((await store.runs.get("run_01F"))!.history).toEqual(history);
      expect((await store.runs.get("run_01G"))!.history).toBeNull();
      expect((await store.runs.list({ limit: 10 }, BOUNDS)).runs.every((r) => !("history" in r))).toBe(true);
    });

    it("finds runs by a part of their input, ignoring case, or by their id", async () => {
      await store.runs.insert(run("run_01S1", { input: "Invoice INV-77 from Lampworks" }));
      await store.runs.insert(run("run_01S2", { input: "A receipt for 3 lamps" }));
      const found = async (search: string) => (await store.runs.list({ limit: 10, search }, BOUNDS)).runs.map((r) => r.id).filter((id) => id.startsWith("run_01S"));
      expect(await found("LAMP")).toEqual(["run_01S2", "run_01S1"]);
      expect(await found("inv-77")).toEqual(["run_01S1"]);
      expect(await found("run_01S2")).toEqual(["run_01S2"]);
      expect(await found("50%_off")).toEqual([]);
    });

    it("records a run's end once, and only for the process that holds its lease", async () => {
      await store.runs.insert(run("run_01O", { lease: { owner: "p1", until: at(1_000) } }));
      expect(await store.runs.finish("run_01O", outcome, event("evt_O1", "run_01O"), "p2")).toBe(false);
      expect(await store.runs.get("run_01O")).toMatchObject({ status: "running" });
      expect(await store.events.forRun("run_01O")).toBeNull();
      expect(await store.runs.finish("run_01O", outcome, event("evt_O2", "run_01O"), "p1")).toBe(true);
      expect(await store.runs.finish("run_01O", { ...outcome, status: "failed" }, event("evt_O3", "run_01O"))).toBe(false);
      expect(await store.runs.get("run_01O")).toMatchObject({ status: "succeeded" });
      expect((await store.events.forRun("run_01O"))?.id).toBe("evt_O2");
    });

    it("claims queued runs oldest first under a lease, and hands runs whose lease ran out to a reconciler", async () => {
      await store.runs.insert(run("run_01Q1", { status: "queued", request: { input: "a" } }));
      await store.runs.insert(run("run_01Q2", { status: "queued", request: { input: "b" } }));
      const first = await store.runs.claimQueued(at(1), { owner: "p1", until: at(1_000) });
      expect(first).toMatchObject({ id: "run_01Q1", status: "running", request: { input: "a" } });
      expect((await store.runs.claimQueued(at(2), { owner: "p1", until: at(1_000) }))!.id).toBe("run_01Q2");
      expect(await store.runs.claimQueued(at(3), { owner: "p1", until: at(1_000) })).toBeNull();
      // p1 renews one lease; the other runs out.
      await store.runs.renewLeases("p1", ["run_01Q1"], at(5_000));
      await store.runs.renewLeases("p2", ["run_01Q2"], at(9_000)); // not p2's: no effect
      const stranded = await store.runs.claimStranded(at(2_000), { owner: "p2", until: at(3_000) }, 10);
      expect(stranded.map((r) => [r.id, r.asyncStarts, r.request])).toEqual([["run_01Q2", 1, { input: "b" }]]);
      expect(await store.runs.claimStranded(at(2_000), { owner: "p3", until: at(3_000) }, 10)).toEqual([]); // claimed already
      await store.runs.requeue("run_01Q2", at(2_001));
      expect((await store.runs.claimQueued(at(2_002), { owner: "p2", until: at(9_000) }))!.id).toBe("run_01Q2");
      expect((await store.runs.get("run_01Q2"))!.status).toBe("running");
      // A finished run is no one's to reconcile.
      await store.runs.finish("run_01Q1", outcome);
      expect(await store.runs.claimStranded(at(9_999), { owner: "p3", until: at(20_000) }, 10)).toEqual([
        expect.objectContaining({ id: "run_01Q2", asyncStarts: 2 }),
      ]);
    });

    it("takes queued runs in turns by key: one key's flood waits behind another key's next run (issue 31)", async () => {
      await store.keys.insert(key("key_flood"));
      await store.keys.insert(key("key_late"));
      for (let i = 1; i <= 5; i++) await store.runs.insert(run(`run_01F${i}`, { status: "queued", request: {}, keyId: "key_flood" }));
      await store.runs.insert(run("run_01G1", { status: "queued", request: {}, keyId: "key_late" }));
      await store.runs.insert(run("run_01G2", { status: "queued", request: {}, keyId: "key_late" }));
      expect(await store.runs.queuedCount("key_flood", 100)).toBe(5);
      expect(await store.runs.queuedCount("key_flood", 3)).toBe(3);
      const lease = { owner: "p1", until: at(60_000) };
      const claim = async (t: number) => (await store.runs.claimQueued(at(t), lease))!.id;
      // One worker, runs ending between claims (nothing running at each claim): keys alternate,
      // the key served longest ago first — not the flood's older runs five times over.
      const order: string[] = [];
      for (let t = 1; t <= 4; t++) {
        const id = await claim(t);
        order.push(id);
        await store.runs.finish(id, outcome);
      }
      expect(order).toEqual(["run_01F1", "run_01G1", "run_01F2", "run_01G2"]);
      // With runs still running, the key with fewer running goes first.
      await store.runs.insert(run("run_01G3", { status: "queued", request: {}, keyId: "key_late" }));
      expect(await claim(10)).toBe("run_01F3");
      expect(await claim(11)).toBe("run_01G3");
      expect(await claim(12)).toBe("run_01F4");
      expect(await store.runs.queuedCount("key_flood", 100)).toBe(1);
    });

    it("claims due events under a lease: one holder at a time, free again once the attempt is recorded or the lease ends", async () => {
      await store.runs.insert(run("run_01L"));
      await store.runs.finish("run_01L", outcome, event("evt_L", "run_01L"));
      expect((await store.events.claimDue(at(1), 10, { owner: "p1", until: at(5_000) })).map((e) => e.id)).toEqual(["evt_L"]);
      expect(await store.events.claimDue(at(2), 10, { owner: "p2", until: at(5_000) })).toEqual([]);
      expect((await store.events.claimDue(at(6_000), 10, { owner: "p2", until: at(9_000) })).map((e) => e.id)).toEqual(["evt_L"]);
      await store.events.recordAttempt("evt_L", { attemptedAt: at(6_001), statusCode: 500, error: null, durationMs: 1, nextAttemptAt: at(6_002) }, "pending", at(9_000));
      expect((await store.events.claimDue(at(6_003), 10, { owner: "p1", until: at(9_000) })).map((e) => e.id)).toEqual(["evt_L"]);
      // A sole owner starting up frees every lease a dead process left behind.
      expect(await store.events.claimDue(at(6_004), 10, { owner: "p2", until: at(9_000) })).toEqual([]);
      await store.events.releaseLeases();
      expect((await store.events.claimDue(at(6_005), 10, { owner: "p2", until: at(9_000) })).map((e) => e.id)).toEqual(["evt_L"]);
    });

    it("keeps a redelivery asked for while an attempt is in flight: the attempt is logged, the event stays due", async () => {
      await store.runs.insert(run("run_01R"));
      await store.runs.finish("run_01R", outcome, { ...event("evt_R", "run_01R"), leaseUntil: at(5_000) });
      // The held attempt is on its way when the redelivery comes; its outcome is recorded after.
      await store.events.redeliver("evt_R", at(10));
      await store.events.recordAttempt("evt_R", { attemptedAt: at(20), statusCode: 200, error: null, durationMs: 10, nextAttemptAt: null }, "delivered", at(5_000));
      const after = await store.events.forRun("run_01R");
      expect(after).toMatchObject({ status: "pending", attempts: 1 });
      expect(after!.deliveries.map((d) => d.statusCode)).toEqual([200]);
      expect((await store.events.claimDue(at(30), 10, { owner: "p1", until: at(9_000) })).map((e) => e.id)).toEqual(["evt_R"]);
      // Another holder's claim after a lease ran out is not overwritten by the late first attempt either.
      await store.events.recordAttempt("evt_R", { attemptedAt: at(40), statusCode: 500, error: null, durationMs: 10, nextAttemptAt: at(50) }, "pending", at(5_000));
      expect(await store.events.forRun("run_01R")).toMatchObject({ status: "pending", attempts: 2 });
      expect(await store.events.claimDue(at(60), 10, { owner: "p2", until: at(9_500) })).toEqual([]);
      await store.events.recordAttempt("evt_R", { attemptedAt: at(70), statusCode: 200, error: null, durationMs: 10, nextAttemptAt: null }, "delivered", at(9_000));
      expect(await store.events.forRun("run_01R")).toMatchObject({ status: "delivered", attempts: 3 });
    });

    it("queues an event already held by the process that delivers it at once: no one claims it before its lease ends", async () => {
      await store.runs.insert(run("run_01H"));
      await store.runs.finish("run_01H", outcome, { ...event("evt_H", "run_01H"), leaseUntil: at(5_000) });
      expect(await store.events.claimDue(at(1), 10, { owner: "p2", until: at(9_000) })).toEqual([]);
      // The holder died before recording an attempt: the event is due to anyone once the lease ends.
      expect((await store.events.claimDue(at(5_001), 10, { owner: "p2", until: at(9_000) })).map((e) => e.id)).toEqual(["evt_H"]);
    });

    it("logs delivery attempts, moves events on, and makes an event due again on redelivery", async () => {
      await store.runs.insert(run("run_01E"));
      await store.runs.finish("run_01E", outcome, event("evt_2", "run_01E"));
      await store.events.recordAttempt("evt_2", { attemptedAt: at(1), statusCode: 500, error: null, durationMs: 3, nextAttemptAt: at(5_000) }, "pending", null);
      expect(await store.events.due(at(2), 10)).toEqual([]);
      expect((await store.events.due(at(6_000), 10)).map((e) => e.attempts)).toEqual([1]);
      await store.events.recordAttempt("evt_2", { attemptedAt: at(6_000), statusCode: 200, error: null, durationMs: 2, nextAttemptAt: null }, "delivered", null);
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
      expect((await store.threads.history(keyId, "t", 1_000)).map((m) => m.content)).toEqual(["q", "a"]);
      expect(await store.threads.get("key_other", "t")).toBeNull();
      expect(await store.threads.delete(keyId, "t")).toBe(true);
      expect(await store.threads.history(keyId, "t", 1_000)).toEqual([]);
    });

    it("versions catalog entries immutably, a deletion included", async () => {
      const v1 = await store.catalog.append("context", "c", { content: "one" }, keyId, at(0));
      const v2 = await store.catalog.append("context", "c", { content: "two" }, keyId, at(1));
      expect([v1.version, v2.version]).toEqual([1, 2]);
      await store.catalog.append("context", "c", null, keyId, at(2));
      expect(await store.catalog.get("context", "c")).toMatchObject({ version: 3, body: null });
      expect((await store.catalog.latest("context")).map((v) => [v.slug, v.version])).toEqual([["c", 3]]);
    });

    it("reads any version of a catalog entry, and keeps labels as their history: moves, removals, promotions decided once", async () => {
      await store.catalog.append("workflow", "w", { model: "m", instructions: "one" }, keyId, at(0));
      await store.catalog.append("workflow", "w", { model: "m", instructions: "two" }, keyId, at(1));
      expect(await store.catalog.version("workflow", "w", 1)).toMatchObject({ version: 1, body: { instructions: "one" } });
      expect(await store.catalog.version("workflow", "w", 9)).toBeNull();
      expect((await store.catalog.versions("workflow", "w")).map((v) => v.version)).toEqual([1, 2]);
      const move = (label: string, version: string | null, outcome: "moved" | "removed" | "refused" = "moved", evaluationId: string | null = null, i = 0) =>
        store.labels.record({ slug: "w", label, outcome, version, keyId, evaluationId, passRate: evaluationId ? 0.5 : null, createdAt: at(10 + i) });
      expect(await move("production", "1")).toMatchObject({ version: "1", previous: null });
      expect(await move("production", "2", "moved", null, 1)).toMatchObject({ version: "2", previous: "1" });
      expect(await move("production", "1", "refused", "eval_A", 2)).toMatchObject({ outcome: "refused", previous: "2" });
      expect(await move("production", "1", "moved", "eval_A", 3)).toBeNull(); // decided already
      expect(await store.labels.get("w", "production")).toMatchObject({ version: "2" });
      expect(await store.catalog.latestWithLabel("w", "production")).toMatchObject({ latest: { version: 2, body: { instructions: "two" } }, labelled: "2" });
      expect(await store.catalog.latestWithLabel("w", "canary")).toMatchObject({ latest: { version: 2 }, labelled: null });
      expect(await store.catalog.latestWithLabel("nothing", "production")).toBeNull();
      await move("staging", "1", "moved", null, 4);
      expect((await store.labels.current("w")).map((l) => [l.label, l.version])).toEqual([["production", "2"], ["staging", "1"]]);
      expect(await move("staging", null, "removed", null, 5)).toMatchObject({ previous: "1" });
      expect(await store.labels.get("w", "staging")).toBeNull();
      expect((await store.catalog.latestWithLabel("w", "staging"))?.labelled).toBeNull(); // removed
      expect((await store.labels.current("w")).map((l) => l.label)).toEqual(["production"]);
      expect((await store.labels.history("w")).map((m) => [m.label, m.outcome, m.version])).toEqual([
        ["staging", "removed", null],
        ["staging", "moved", "1"],
        ["production", "refused", "1"],
        ["production", "moved", "2"],
        ["production", "moved", "1"],
      ]);
    });

    it("finds ended evaluations whose promotion no label move records yet", async () => {
      const gated = { id: "eval_01P", suiteSlug: "s", suiteVersion: 1, keyId, target: { workflowSlug: "w@2", promotion: { slug: "w", label: "production", version: "2", minPass: 1 } }, snapshotId: "snap_1", createdAt: at(0) };
      await store.evaluations.insert(gated);
      await store.evaluations.insert({ ...gated, id: "eval_01Q", target: { workflowSlug: "w" } });
      for (const id of ["eval_01P", "eval_01Q"]) {
        const claimed = await store.evaluations.claim(at(1), { owner: "p1", until: at(1000) });
        expect(claimed?.id).toBe(id);
      }
      expect(await store.evaluations.undecidedPromotions()).toEqual([]); // still running
      for (const id of ["eval_01P", "eval_01Q"]) await store.evaluations.finish(id, "p1", { status: "completed", summary: { passRate: 1 }, error: null, finishedAt: at(2) });
      expect((await store.evaluations.undecidedPromotions()).map((e) => e.id)).toEqual(["eval_01P"]);
      await store.labels.record({ slug: "w", label: "production", outcome: "moved", version: "2", keyId, evaluationId: "eval_01P", passRate: 1, createdAt: at(3) });
      expect(await store.evaluations.undecidedPromotions()).toEqual([]);
    });

    it("keeps share links by id and token hash, lists them per key, and revokes them once", async () => {
      const share = { id: "shr_1", tokenHash: "h1", kind: "run" as const, targetId: "run_1", keyId, hideFields: ["/email"], expiresAt: at(100), revokedAt: null, createdAt: at(0) };
      await store.shares.create(share);
      await store.shares.create({ ...share, id: "shr_2", tokenHash: "h2", keyId: "other" });
      expect(await store.shares.byToken("h1")).toEqual(share);
      expect((await store.shares.list({ keyId })).map((s) => s.id)).toEqual(["shr_1"]);
      expect((await store.shares.list({})).map((s) => s.id)).toEqual(["shr_2", "shr_1"]);
      // A project's links are its keys' (the contract's key is in the default project; "other" is no key).
      expect((await store.shares.list({ projectId: "prj_default" })).map((s) => s.id)).toEqual(["shr_1"]);
      expect(await store.shares.list({ projectId: "prj_elsewhere" })).toEqual([]);
      expect(await store.shares.revoke("shr_1", at(5))).toBe(true);
      expect(await store.shares.revoke("shr_1", at(6))).toBe(false);
      expect(await store.shares.get("shr_1")).toMatchObject({ revokedAt: at(5) });
    });

    it("stores streamed events' text exactly, whatever it holds (a batch travels as one JSON parameter)", async () => {
      const texts = ['{"q":"\\"quoted\\" and \\\\ back"}', "$1 @p1 '$.seq' %s", "emoji 🧾 · accents é · line\u2028sep", "x".repeat(200_000), ""];
      await store.streams.append("run_01W", texts.map((event, i) => ({ seq: i + 1, event, final: i === texts.length - 1 })), at(1));
      expect((await store.streams.after("run_01W", 0, 10)).map((x) => x.event)).toEqual(texts);
    });

    it("keeps streamed runs' events in order for any process, announces appends, and forgets ended streams", async () => {
      const heard: string[] = [];
      const listener = await store.streams.listen((runId) => heard.push(runId), () => undefined);
      try {
        const e = (seq: number, final = false) => ({ seq, event: JSON.stringify({ kind: final ? "done" : "item", seq }), final });
        await store.streams.append("run_01S", [e(1), e(2)], at(1));
        await store.streams.append("run_01S", [e(3, true)], at(2));
        await store.streams.append("run_01T", [e(1)], at(3));
        expect((await store.streams.after("run_01S", 1, 10)).map((x) => [x.seq, x.final])).toEqual([[2, false], [3, true]]);
        expect(await store.streams.after("run_01S", 0, 1)).toEqual([e(1)]);
        const until = Date.now() + 5_000;
        while (heard.length < 3 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
        expect(heard).toEqual(["run_01S", "run_01S", "run_01T"]);
        // Ended before the cut-off: gone; unfinished streams stay until they are orphaned.
        await store.streams.sweep(at(5), at(0));
        expect(await store.streams.after("run_01S", 0, 10)).toEqual([]);
        expect(await store.streams.after("run_01T", 0, 10)).toHaveLength(1);
        await store.streams.sweep(at(5), at(4));
        expect(await store.streams.after("run_01T", 0, 10)).toEqual([]);
      } finally {
        await listener.close();
      }
    });

    it("exports every table and imports it whole into an empty store, numbering continuing after the imported rows", async () => {
      await store.keys.insert({ ...key("key_admin"), admin: true, role: "admin" });
      await store.runs.insert(run("run_01X"));
      await store.runs.finish("run_01X", outcome, event("evt_X", "run_01X"));
      await store.events.recordAttempt("evt_X", { attemptedAt: at(1), statusCode: 500, error: null, durationMs: 3, nextAttemptAt: at(5_000) }, "pending", null);
      await store.threads.create({ id: "th_1", keyId, workflowSlug: "w", createdAt: at(0), updatedAt: at(0) });
      await store.threads.append(keyId, "th_1", [{ role: "user", content: "hi", runId: "run_01X", createdAt: at(1) }], at(1));
      await store.inboxes.create({ id: "inb_X", keyId, host: "h", createdAt: at(0) });
      await store.inboxes.receive("inb_X", { receivedAt: at(1), headers: { a: "b" }, body: "{}", verified: true }, { keep: 10, maxBytes: 1_000, maxAgeMs: 60_000 });
      await store.catalog.append("workflow", "w", { model: "m" }, keyId, at(2));
      await store.idempotency.begin(keyId, "idem", "hash", at(3), 60_000);

      const target = await open.another();
      try {
        const exported = async function* () {
          for (const table of TRANSFER_TABLES) for await (const row of store.transfer.rows(table)) yield { table, row };
        };
        const counts = await target.transfer.load(exported());
        expect(counts).toMatchObject({ api_keys: 2, runs: 1, events: 1, deliveries: 1, threads: 1, thread_messages: 1, inboxes: 1, inbox_events: 1, catalog_versions: 1, idempotency_keys: 1 });
        expect(await target.keys.get("key_admin")).toMatchObject({ admin: true });
        expect(await target.runs.get("run_01X")).toEqual(await store.runs.get("run_01X"));
        expect(await target.events.forRun("run_01X")).toEqual(await store.events.forRun("run_01X"));
        const page = { limit: 10, maxBytes: 1_000 };
        expect(await target.inboxes.events("inb_X", page)).toEqual(await store.inboxes.events("inb_X", page));
        expect(await target.catalog.get("workflow", "w")).toEqual(await store.catalog.get("workflow", "w"));
        expect(await target.idempotency.begin(keyId, "idem", "hash", at(4), 60_000)).toMatchObject({ state: "in_progress" });
        // New rows are numbered after the imported ones.
        await target.threads.append(keyId, "th_1", [{ role: "assistant", content: "hello", runId: null, createdAt: at(2) }], at(2));
        expect((await target.threads.history(keyId, "th_1", 1_000)).map((m) => m.content)).toEqual(["hi", "hello"]);
        expect(await target.threads.get(keyId, "th_1")).toMatchObject({ messageCount: 2, bytes: 7 });
        await target.events.recordAttempt("evt_X", { attemptedAt: at(6_000), statusCode: 200, error: null, durationMs: 2, nextAttemptAt: null }, "delivered", null);
        expect((await target.events.forRun("run_01X"))!.deliveries.map((d) => d.statusCode)).toEqual([500, 200]);
        // A store that holds anything refuses an import; a failed import leaves nothing behind.
        await expect(target.transfer.load(exported())).rejects.toThrow(/already holds/);
      } finally {
        await target.close();
      }
    });

    it("refuses an import with a column this version does not know, writing nothing", async () => {
      const target = await open.another();
      try {
        const rows = async function* (): AsyncGenerator<{ table: TransferTable; row: TransferRow }> {
          yield { table: "api_keys", row: keyRow("key_new") };
          yield { table: "runs", row: { id: "run_1", from_the_future: 1 } };
        };
        await expect(target.transfer.load(rows())).rejects.toThrow(/from_the_future/);
        expect(await target.keys.get("key_new")).toBeNull();
      } finally {
        await target.close();
      }
    });

    it("changes a key's name and limits, and clears a limit with null", async () => {
      expect(await store.keys.update(keyId, { name: "renamed", limits: { rpm: 5, workflows: ["a", "b"], budgetDailyNanos: 2_500_000_000 } })).toBe(true);
      expect(await store.keys.get(keyId)).toMatchObject({ name: "renamed", limits: { rpm: 5, tpm: null, workflows: ["a", "b"], budgetDailyNanos: 2_500_000_000 } });
      expect(await store.keys.update(keyId, { limits: { rpm: null } })).toBe(true);
      expect((await store.keys.get(keyId))!.limits.rpm).toBeNull();
      expect(await store.keys.update("key_none", { name: "x" })).toBe(false);
    });

    it("admits a run with its reservations or refuses both, extends them, and settles them to what the run used", async () => {
      const charges = (amount: number) => [
        { meter: "rpm:1", amount: 1, limit: 2 },
        { meter: "daily:d", amount, limit: 100 },
      ];
      expect(await store.runs.insert(run("run_01M1"), charges(60))).toMatchObject({ ok: true, states: [{ meter: "daily:d", reserved: 60 }, { meter: "rpm:1", reserved: 1 }] });
      const refused = await store.runs.insert(run("run_01M2"), charges(50));
      expect(refused).toMatchObject({ ok: false, refused: { meter: "daily:d", used: 0, reserved: 60, limit: 100, amount: 50 } });
      expect(await store.runs.get("run_01M2")).toBeNull();
      expect(await store.keys.meters(keyId, ["rpm:1", "daily:d"])).toEqual([
        { meter: "rpm:1", used: 0, reserved: 1 },
        { meter: "daily:d", used: 0, reserved: 60 },
      ]);
      // A retry reserves more, within the limit.
      expect((await store.runs.reserve("run_01M1", keyId, [{ meter: "daily:d", amount: 30, limit: 100 }], at(1))).ok).toBe(true);
      expect((await store.runs.reserve("run_01M1", keyId, [{ meter: "daily:d", amount: 30, limit: 100 }], at(1))).ok).toBe(false);
      // It ends having used 25: the 90 reserved are released, 25 are used.
      await store.runs.finish("run_01M1", outcome, undefined, undefined, { rpm: 1, daily: 25 });
      expect(await store.keys.meters(keyId, ["rpm:1", "daily:d"])).toEqual([
        { meter: "rpm:1", used: 1, reserved: 0 },
        { meter: "daily:d", used: 25, reserved: 0 },
      ]);
      // A run whose use is unknown (its process died) is charged what it reserved.
      expect((await store.runs.insert(run("run_01M3"), charges(40))).ok).toBe(true);
      expect((await store.runs.insert(run("run_01M4"), charges(1))).ok).toBe(false); // rpm: 2 a window
      await store.runs.finish("run_01M3", outcome, undefined, undefined, "reserved");
      expect((await store.keys.meters(keyId, ["daily:d"]))[0]).toEqual({ meter: "daily:d", used: 65, reserved: 0 });
      await store.usage.sweep([{ prefix: "rpm:", before: "9999" }]);
      expect(await store.keys.meters(keyId, ["rpm:1", "daily:d"])).toEqual([
        { meter: "rpm:1", used: 0, reserved: 0 },
        { meter: "daily:d", used: 65, reserved: 0 },
      ]);
    });

    it("starts queued runs only while their key has a free slot, and frees the slot when a run ends or is queued again", async () => {
      await store.keys.update(keyId, { limits: { concurrency: 1 } });
      await store.keys.insert(key("key_free"));
      await store.runs.insert(run("run_01C1", { status: "queued", request: {} }));
      await store.runs.insert(run("run_01C2", { status: "queued", request: {} }));
      await store.runs.insert(run("run_01C3", { status: "queued", request: {}, keyId: "key_free" }));
      const lease = { owner: "p1", until: at(60_000) };
      expect((await store.runs.claimQueued(at(1), lease))!.id).toBe("run_01C1");
      // run_01C2's key is at its limit: the other key's run goes first.
      expect((await store.runs.claimQueued(at(2), lease))!.id).toBe("run_01C3");
      expect(await store.runs.claimQueued(at(3), lease)).toBeNull();
      await store.runs.requeue("run_01C1", at(4));
      expect((await store.runs.claimQueued(at(5), lease))!.id).toBe("run_01C1");
      await store.runs.finish("run_01C1", outcome, undefined, "p1", { rpm: 1 });
      expect((await store.runs.claimQueued(at(6), lease))!.id).toBe("run_01C2");
      expect((await store.keys.meters(keyId, ["concurrency"]))[0]).toEqual({ meter: "concurrency", used: 0, reserved: 1 });
    });

    it("reports finished runs per group and over time: runs, errors, tokens, cost and duration percentiles", async () => {
      const day = (d: number, h: number) => `2026-03-0${d}T${String(h).padStart(2, "0")}:15:00.000Z`;
      const runs = [
        { id: "run_01U1", workflowSlug: "a", createdAt: day(1, 9), durationMs: 100, cost: "0.25", status: "succeeded" as const },
        { id: "run_01U2", workflowSlug: "a", createdAt: day(1, 9), durationMs: 300, cost: "0.000000001", status: "failed" as const },
        { id: "run_01U3", workflowSlug: "a", createdAt: day(1, 10), durationMs: 200, cost: "0.5", status: "succeeded" as const },
        { id: "run_01U4", workflowSlug: "b", createdAt: day(2, 8), durationMs: 50, cost: "1", status: "succeeded" as const },
        // A cancelled run is finished: its tokens and cost count, and it is not a success.
        { id: "run_01U7", workflowSlug: "b", createdAt: day(2, 9), durationMs: 150, cost: "0.5", status: "cancelled" as const },
        { id: "run_01U5", workflowSlug: "b", createdAt: day(5, 8), durationMs: 1, cost: "9", status: "succeeded" as const }, // outside the range
      ];
      for (const r of runs) {
        await store.runs.insert(run(r.id, { workflowSlug: r.workflowSlug, createdAt: r.createdAt }));
        await store.runs.finish(r.id, { ...outcome, status: r.status, durationMs: r.durationMs, cost: r.cost });
      }
      await store.runs.insert(run("run_01U6", { createdAt: day(1, 9) })); // still running: not counted
      const report = await store.usage.report({ from: day(1, 0), to: day(3, 0), keyId: null, projectId: null, groupBy: "workflow", bucket: "day" });
      expect(report.groups).toEqual([
        { group: "b", runs: 2, errors: 1, inputTokens: 6, outputTokens: 8, costUsd: "1.5", durationMsP50: 50, durationMsP95: 150 },
        { group: "a", runs: 3, errors: 1, inputTokens: 9, outputTokens: 12, costUsd: "0.750000001", durationMsP50: 200, durationMsP95: 300 },
      ]);
      expect(report.series).toEqual([
        { at: "2026-03-01T00:00:00.000Z", runs: 3, errors: 1, costUsd: "0.750000001" },
        { at: "2026-03-02T00:00:00.000Z", runs: 2, errors: 1, costUsd: "1.5" },
      ]);
      const hourly = await store.usage.report({ from: day(1, 0), to: day(2, 0), keyId, projectId: null, groupBy: "model", bucket: "hour" });
      expect(hourly.groups).toMatchObject([{ group: "m1", runs: 3 }]);
      expect(hourly.series.map((s) => [s.at, s.runs])).toEqual([["2026-03-01T09:00:00.000Z", 2], ["2026-03-01T10:00:00.000Z", 1]]);
      expect((await store.usage.report({ from: day(1, 0), to: day(3, 0), keyId: "key_other", projectId: null, groupBy: "key", bucket: "day" })).groups).toEqual([]);
      // A project's report holds its keys' runs only.
      expect((await store.usage.report({ from: day(1, 0), to: day(3, 0), keyId: null, projectId: "prj_default", groupBy: "workflow", bucket: "day" })).groups).toHaveLength(2);
      expect((await store.usage.report({ from: day(1, 0), to: day(3, 0), keyId: null, projectId: "prj_elsewhere", groupBy: "workflow", bucket: "day" })).groups).toEqual([]);
      expect(await store.stats()).toEqual({ pendingEvents: 0, queuedRuns: 0 });
    });

    it("keeps an inbox's newest events within its limits", async () => {
      await store.inboxes.create({ id: "inb_1", keyId, host: "h", createdAt: at(0) });
      for (let i = 0; i < 5; i++) await store.inboxes.receive("inb_1", { receivedAt: at(i), headers: {}, body: String(i), verified: true }, { keep: 3, maxBytes: 1_000, maxAgeMs: 60_000 });
      const { events } = await store.inboxes.events("inb_1", { limit: 10, maxBytes: 1_000 });
      expect(events.map((e) => ({ body: e.body, verified: e.verified }))).toEqual(["4", "3", "2"].map((body) => ({ body, verified: true })));
    });

    it("lets two processes race for the same work: each queued run and due event is claimed once, one request per Idempotency-Key runs", async () => {
      const other = await open.second();
      try {
        const ids = Array.from({ length: 20 }, (_, i) => `run_01R${String(i).padStart(2, "0")}`);
        for (const id of ids) await store.runs.insert(run(id, { status: "queued", request: { id } }));
        const claimAll = async (s: Store, owner: string) => {
          const got: string[] = [];
          for (let r = await s.runs.claimQueued(at(1), { owner, until: at(60_000) }); r; r = await s.runs.claimQueued(at(1), { owner, until: at(60_000) })) got.push(r.id);
          return got;
        };
        const [a, b] = await Promise.all([claimAll(store, "p1"), claimAll(other, "p2")]);
        expect([...a, ...b].sort()).toEqual(ids);

        for (const [i, id] of ids.entries()) await store.runs.finish(id, outcome, event(`evt_R${i}`, id));
        const [ea, eb] = await Promise.all([store.events.claimDue(at(2), 50, { owner: "p1", until: at(60_000) }), other.events.claimDue(at(2), 50, { owner: "p2", until: at(60_000) })]);
        expect([...ea, ...eb].map((e) => e.id).sort()).toEqual(ids.map((_, i) => `evt_R${i}`).sort());

        const attempts = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? store : other).idempotency.begin(keyId, "same-key", "h", at(3), 60_000)));
        expect(attempts.filter((a) => a === null)).toHaveLength(1);

        // 50 runs at once against a budget of 10 runs' worth: exactly 10 are admitted.
        const admitted = await Promise.all(
          Array.from({ length: 50 }, (_, i) => (i % 2 ? store : other).runs.insert(run(`run_01B${String(i).padStart(2, "0")}`), [{ meter: "monthly:m", amount: 7, limit: 70 }])),
        );
        expect(admitted.filter((a) => a.ok)).toHaveLength(10);
        expect((await store.keys.meters(keyId, ["monthly:m"]))[0]).toEqual({ meter: "monthly:m", used: 0, reserved: 70 });
      } finally {
        await other.close();
      }
    });

    it("keeps suites by slug (version + 1 on each change, owner kept) and lists them by owner", async () => {
      const first = await store.suites.put("invoices", keyId, { cases: [1] }, at(0));
      expect(first).toMatchObject({ created: true, suite: { slug: "invoices", keyId, version: 1, document: { cases: [1] } } });
      const second = await store.suites.put("invoices", "key_someone_else", { cases: [1, 2] }, at(5));
      expect(second).toMatchObject({ created: false, suite: { keyId, version: 2, document: { cases: [1, 2] }, createdAt: at(0), updatedAt: at(5) } });
      expect((await store.suites.list({ keyId })).map((s) => s.slug)).toEqual(["invoices"]);
      expect(await store.suites.list({ keyId: "key_nobody" })).toEqual([]);
      expect((await store.suites.list({ projectId: "prj_default" })).map((s) => s.slug)).toEqual(["invoices"]);
      expect(await store.suites.list({ projectId: "prj_elsewhere" })).toEqual([]);
      expect(await store.suites.delete("invoices")).toBe(true);
      expect(await store.suites.delete("invoices")).toBe(false);
      expect(await store.suites.get("invoices")).toBeNull();
    });

    it("records the evaluation a run was made for, and lists an evaluation's runs", async () => {
      await store.runs.insert(run("run_01E1", { evaluationId: "eval_01X" }));
      await store.runs.insert(run("run_01E2"));
      await store.runs.insert(run("run_01E3", { evaluationId: "eval_01X" }));
      expect((await store.runs.get("run_01E1"))?.evaluationId).toBe("eval_01X");
      expect((await store.runs.get("run_01E2"))?.evaluationId).toBeNull();
      expect((await store.runs.list({ evaluationId: "eval_01X", limit: 10 }, BOUNDS)).runs.map((r) => r.id)).toEqual(["run_01E3", "run_01E1"]);
    });

    pagesContract(() => ({ store, keyId }));
    cancelContract(() => ({ store, keyId }), open.second);
  });
}
