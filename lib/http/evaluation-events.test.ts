import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Catalog } from "../catalog/workflow-catalog";
import { parseConfigText } from "../config/load";
import { EvaluationService } from "../evals/evaluation-service";
import { createKey } from "../keys/api-keys";
import { openSqliteStore } from "../store/sqlite";
import type { Store } from "../store/store-types";
import { routesFor } from "./table";

const evaluationEvents = routesFor("/api/v1/evaluations/{id}/events").GET;

// Issue 31, finding 2.4: followers of one evaluation's event stream must share one reader of it
// and read only what changed (new results, the status row), never the suite on every tick. The
// route runs in-process on a real SQLite store whose evaluation reads are counted.

const FOLLOWERS = 50;
const CONFIG = `
models:
  mock:
    provider: openai-compatible
    baseURL: http://127.0.0.1:9/v1
    model: mock-1
workflows:
  w:
    model: mock
`;
const RUNTIME = Symbol.for("genserve.runtime");

/** The store with its evaluation reads counted: calls, and results handed out. */
function counted(store: Store) {
  const reads = { get: 0, items: 0, results: 0, snapshot: 0 };
  const evaluations: Store["evaluations"] = {
    ...store.evaluations,
    get: async (id) => (reads.get++, store.evaluations.get(id)),
    snapshot: async (id) => (reads.snapshot++, store.evaluations.snapshot(id)),
    items: async (id, afterSeq) => {
      reads.items++;
      const rows = await store.evaluations.items(id, afterSeq);
      reads.results += rows.length;
      return rows;
    },
  };
  return { store: { ...store, evaluations }, reads };
}

describe("GET /api/v1/evaluations/{id}/events", () => {
  let store: Store;
  beforeEach(() => {
    store = openSqliteStore(mkdtempSync(path.join(os.tmpdir(), "genserve-events-")));
  });
  afterEach(async () => {
    delete (globalThis as Record<symbol, unknown>)[RUNTIME];
    await store.close();
  });

  it("serves every follower of an evaluation from one reader per process, reading only new results and the status row", async () => {
    const config = parseConfigText(CONFIG, path.join(os.tmpdir(), "genserve.yaml"), {});
    const logger = pino({ level: "silent" });
    const { store: watched, reads } = counted(store);
    const refuse = async (): Promise<never> => {
      throw new Error("no case runs here");
    };
    // Not started: nothing executes; the test records results as the executing process would.
    const service = new EvaluationService({ config, store: watched, runs: { generateObject: refuse, generateText: refuse }, catalog: new Catalog(config, watched), logger, replicaId: "p_test", publicUrl: "http://127.0.0.1:1", followPollMs: 3_600_000 });
    (globalThis as Record<symbol, unknown>)[RUNTIME] = { config, store: watched, evaluations: service, logger, metrics: { httpRequest() {} } };

    const { key, record } = await createKey(store, { name: "watcher", admin: false });
    // A suite of some size: re-reading it on each tick is what made followers expensive.
    const document = { suite: "big", cases: Array.from({ length: 200 }, (_, i) => ({ name: `case ${i}`, input: `input ${i} ${"x".repeat(500)}` })) };
    await store.suites.put("big", record.id, document, new Date().toISOString());
    const snapshotId = await store.evaluations.saveSnapshot({ id: "snap_big", suiteSlug: "big", suiteVersion: 1, document, createdAt: new Date().toISOString() });
    await store.evaluations.insert({ id: "eval_01FOLLOW", suiteSlug: "big", suiteVersion: 1, keyId: record.id, target: { workflowSlug: "w", repeat: 1 }, snapshotId, createdAt: new Date().toISOString() });
    await store.evaluations.claim(new Date().toISOString(), { owner: "p_test", until: new Date(Date.now() + 3_600_000).toISOString() });

    const streams = await Promise.all(
      Array.from({ length: FOLLOWERS }, async () => {
        const response = await evaluationEvents(new Request("http://genserve.test/api/v1/evaluations/eval_01FOLLOW/events", { headers: { "api-key": key } }), { params: Promise.resolve({ id: "eval_01FOLLOW" }) });
        expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
        const stream = { text: "", done: false };
        void (async () => {
          const reader = response.body!.getReader();
          const decoder = new TextDecoder();
          for (let next = await reader.read(); !next.done; next = await reader.read()) stream.text += decoder.decode(next.value, { stream: true });
          stream.done = true;
        })();
        return stream;
      }),
    );
    const until = async (check: () => boolean, what: string) => {
      for (const end = Date.now() + 30_000; !check(); await new Promise((r) => setTimeout(r, 10))) if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    };
    // Each request read the evaluation once to authorize its caller; from here on, only followers read.
    const before = { ...reads };

    const item = (caseIndex: number) => ({ caseIndex, repeat: 0, runId: `run_${caseIndex}`, status: "passed" as const, output: { n: caseIndex }, checks: [], error: null, durationMs: 5, inputTokens: 1, outputTokens: 1, cost: "0", createdAt: new Date().toISOString() });
    for (const caseIndex of [0, 1, 2]) {
      expect(await store.evaluations.recordItem("eval_01FOLLOW", "p_test", item(caseIndex))).toBe(true);
      service.notify("eval_01FOLLOW");
      await until(() => streams.every((s) => s.text.includes(`"case":"case ${caseIndex}"`)), `every follower to have result ${caseIndex}`);
    }
    await store.evaluations.finish("eval_01FOLLOW", "p_test", { status: "completed", summary: null, error: null, finishedAt: new Date().toISOString() });
    service.notify("eval_01FOLLOW");
    await until(() => streams.every((s) => s.done), "every stream to end");

    for (const { text } of streams) {
      const events = text.split("\n\n").filter(Boolean);
      expect(events.filter((e) => e.includes("event: result")).map((e) => /^id: (\d+)/.exec(e)?.[1])).toEqual(["1", "2", "3"]);
      expect(events.at(-2)).toBe(`event: progress\ndata: ${JSON.stringify({ done: 3, passed: 3, failed: 0, errors: 0, total: 200 })}`);
      expect(JSON.parse(events.at(-1)!.replace(/^event: end\ndata: /, ""))).toMatchObject({ id: "eval_01FOLLOW", status: "completed", totals: { done: 3, runs: 200 } });
    }
    // Four changes (three results and the end) for 50 followers: a handful of reads, not 50 per change.
    const followed = { get: reads.get - before.get, items: reads.items - before.items, results: reads.results - before.results };
    expect(followed.get).toBeLessThanOrEqual(8);
    expect(followed.items).toBeLessThanOrEqual(10);
    // Each result read about once (the totals at the end read them all once more), never once per follower.
    expect(followed.results).toBeLessThanOrEqual(3 + 3 + 3);
    // The suite is read once, for the reader (case names, the total), never per follower or tick.
    expect(reads.snapshot).toBeLessThanOrEqual(1);
  });
});
