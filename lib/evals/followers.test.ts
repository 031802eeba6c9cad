import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EvaluationTotals } from "../api/suite-shapes";
import { openSqliteStore } from "../store/sqlite";
import type { Store } from "../store/store-types";
import { NO_LIMITS } from "../domain/key-limits";
import { EvaluationFollowers, type FollowerSink } from "./followers";
import { SuiteSnapshots } from "./snapshots";

// The shared reader behind GET /api/v1/evaluations/{id}/events: late followers start from the
// results it keeps, or from storage when they resume from older ones; nobody misses or repeats one.

describe("EvaluationFollowers", () => {
  let store: Store;
  beforeEach(async () => {
    store = openSqliteStore(mkdtempSync(path.join(os.tmpdir(), "genserve-followers-")));
    const at = new Date().toISOString();
    await store.keys.insert({ id: "key_f", name: "k", hash: "f".repeat(64), prefix: "gs_k", admin: false, role: "editor" as const, projectId: "prj_default", createdAt: at, lastUsedAt: null, revokedAt: null, webhookSecret: "whsec_test", limits: NO_LIMITS });
    const document = { suite: "s", cases: Array.from({ length: 10 }, (_, i) => ({ name: `c${i}`, input: `${i}` })) };
    await store.evaluations.saveSnapshot({ id: "snap_f", suiteSlug: "s", suiteVersion: 1, document, createdAt: at });
    await store.evaluations.insert({ id: "eval_01F", suiteSlug: "s", suiteVersion: 1, keyId: "key_f", target: { repeat: 1 }, snapshotId: "snap_f", createdAt: at });
    await store.evaluations.claim(at, { owner: "p", until: new Date(Date.now() + 3_600_000).toISOString() });
  });
  afterEach(() => store.close());

  const record = (caseIndex: number) =>
    store.evaluations.recordItem("eval_01F", "p", { caseIndex, repeat: 0, runId: null, status: caseIndex % 2 ? "failed" : "passed", output: null, checks: [], error: null, durationMs: 1, inputTokens: 0, outputTokens: 0, cost: "0", createdAt: new Date().toISOString() });
  /** A follower's view: the results it got (by case index), the last counts, and whether it ended. */
  const follower = () => {
    const seen = { results: [] as number[], done: -1, ended: null as string | null };
    const sink: FollowerSink = {
      result: (_seq, data) => seen.results.push((JSON.parse(data) as { caseIndex: number }).caseIndex),
      progress: (progress) => (seen.done = progress.done),
      end: (evaluation, totals) => (seen.ended = `${evaluation?.status} ${totals?.done}`),
    };
    return { seen, sink };
  };
  const until = async (check: () => boolean, what: string) => {
    for (const end = Date.now() + 20_000; !check(); await new Promise((r) => setTimeout(r, 10))) if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  };

  it("start late followers from the results kept in memory, or from storage for older ones, and end them all together", async () => {
    const followers = new EvaluationFollowers({
      store,
      snapshots: new SuiteSnapshots(store),
      logger: pino({ level: "silent" }),
      pollMs: 3_600_000,
      // Two results kept: a follower resuming from before them reads the rest from storage.
      recent: { results: 2, bytes: 1024 * 1024 },
      totals: async (evaluation) => ({ done: (await store.evaluations.items(evaluation.id)).length }) as EvaluationTotals,
    });
    for (const i of [0, 1, 2, 3, 4]) await record(i);
    const evaluation = (await store.evaluations.get("eval_01F"))!;
    const first = follower();
    followers.follow(evaluation, 0, first.sink);
    await until(() => first.seen.results.length === 5, "the first follower's five results");
    // seqs 1-5 were read; 4 and 5 are kept. One follower resumes after 1 (from storage), one after 4 (from memory).
    const older = follower();
    const recent = follower();
    followers.follow(evaluation, 1, older.sink);
    followers.follow(evaluation, 4, recent.sink);
    followers.wake(evaluation.id);
    await until(() => older.seen.results.length === 4 && recent.seen.results.length === 1, "the late followers' results");
    await record(5);
    followers.wake(evaluation.id);
    await until(() => [first, older, recent].every((f) => f.seen.results.includes(5)), "result 5 for everyone");
    await store.evaluations.finish("eval_01F", "p", { status: "completed", summary: null, error: null, finishedAt: new Date().toISOString() });
    followers.wake(evaluation.id);
    await until(() => [first, older, recent].every((f) => f.seen.ended !== null), "the end for everyone");

    expect(first.seen).toEqual({ results: [0, 1, 2, 3, 4, 5], done: 6, ended: "completed 6" });
    expect(older.seen).toEqual({ results: [1, 2, 3, 4, 5], done: 6, ended: "completed 6" });
    expect(recent.seen).toEqual({ results: [4, 5], done: 6, ended: "completed 6" });
  });
});
