import path from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import type { ReceivedRequest } from "../helpers/fake-upstream";
import { createKey, get, post } from "../helpers/genserve";
import { waitUntil } from "../helpers/receiver";
import { useGenserve } from "../helpers/suite";

// Issue 31, finding 2.3: one key's evaluations must not starve another key's. Keys take turns for
// the process's evaluation slots (one here), an evaluation that held its slot past its slice while
// another key's waits gives way, and a key's queue, a suite's runs and a suite's size are capped.
// Every wait is on a state (a request held at the model, an evaluation's status), never on time.

const CONFIG = `
limits:
  evaluations: 1
  evaluationConcurrency: 1
  evaluationSliceMs: 0
  evaluationsQueuedPerKey: 2
  evaluationRuns: 40
  suiteBytes: 16384
`;
const ctx = useGenserve(CONFIG);
let a: { id: string; key: string };
let b: { id: string; key: string };

beforeAll(async () => {
  a = await createKey("fair-a", { dataDir: ctx.server.dataDir });
  b = await createKey("fair-b", { dataDir: ctx.server.dataDir });
});

const put = async (slug: string, body: unknown, key: string) => {
  const response = await fetch(`${ctx.server.url}/api/v1/suites/${slug}`, { method: "PUT", headers: { "content-type": "application/json", "api-key": key }, body: JSON.stringify(body) });
  return { status: response.status, json: (await response.json()) as any };
};
const start = (slug: string, key: string, body: Record<string, unknown> = {}) => post(ctx.server, `/api/v1/suites/${slug}/evaluations`, body, key);
const report = async (id: string, key: string) => (await get(ctx.server, `/api/v1/evaluations/${id}`, key)).json;
const ended = async (id: string, key: string) => {
  await waitUntil(async () => ["completed", "failed", "cancelled"].includes((await report(id, key)).status), `evaluation ${id} to end`, 60_000);
  return report(id, key);
};
const inputOf = (body: ReceivedRequest["body"]) => String([...body.messages].reverse().find((m) => m.role === "user")!.content);
/** A model the test releases: requests whose input contains `marker` are held until `release()`. */
function holdWhile(marker: string) {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  ctx.upstream.respondWith((body) => (inputOf(body).includes(marker) ? { waitFor: held } : undefined));
  return { release, atModel: () => ctx.upstream.requests.some((r) => inputOf(r.body).includes(marker)) };
}
const cases = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ name: `${prefix} ${i}`, input: `${prefix} ${i}` }));

describe("evaluation slots", () => {
  it("go to another key's evaluation before one key's queue drains: the running one gives way, and keys take turns", async () => {
    expect((await put("long", { workflow: "no-retry", cases: cases("long", 30) }, a.key)).status).toBe(201);
    expect((await put("short", { workflow: "no-retry", cases: cases("short", 1) }, b.key)).status).toBe(201);
    const model = holdWhile("long 0");
    const first = (await start("long", a.key)).json.id as string;
    const second = (await start("long", a.key)).json.id as string;
    // A's first evaluation holds the one slot, its first case at the model; A's second waits.
    let other;
    try {
      await waitUntil(model.atModel, "A's first case at the model", 30_000);
      other = await start("short", b.key);
      expect(other.status).toBe(202);
    } finally {
      model.release();
    }
    const [one, two, theirs] = [await ended(first, a.key), await ended(second, a.key), await ended(other.json.id, b.key)];

    for (const evaluation of [one, two, theirs]) expect(evaluation.status).toBe("completed");
    // B's evaluation ran while A's first was still unfinished (it gave way), and before A's second started.
    expect(Date.parse(theirs.finishedAt)).toBeLessThan(Date.parse(one.finishedAt));
    expect(Date.parse(theirs.startedAt)).toBeLessThan(Date.parse(two.startedAt));
    // Giving way lost nothing and repeated nothing: every case of A's first ran to a result once.
    expect(one.totals).toMatchObject({ runs: 30, done: 30, passed: 30 });
    expect(one.cases.map((c: { runs: unknown[] }) => c.runs.length)).toEqual(Array(30).fill(1));
    expect(ctx.upstream.requests.filter((r) => inputOf(r.body).startsWith("long ")).length).toBe(60);
  }, 120_000);
});

describe("a key's evaluations", () => {
  it("are refused past the key's queued cap with 429 evaluation_queue_full and Retry-After, other keys unaffected", async () => {
    await put("held", { workflow: "no-retry", cases: cases("held", 2) }, a.key);
    await put("theirs", { workflow: "no-retry", cases: cases("theirs", 1) }, b.key);
    const model = holdWhile("held 0");
    const started: { id: string; key: string }[] = [];
    const begin = async (slug: string, key: string) => {
      const response = await start(slug, key);
      if (response.status === 202) started.push({ id: response.json.id, key });
      return response;
    };
    try {
      await begin("held", a.key);
      await waitUntil(model.atModel, "the first evaluation at the model", 30_000);
      // One running, then two queued: the cap.
      for (let i = 0; i < 2; i++) expect((await begin("held", a.key)).status).toBe(202);
      const refused = await begin("held", a.key);
      expect(refused.status).toBe(429);
      expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(refused.json).toMatchObject({ code: "evaluation_queue_full", status: 429, detail: expect.stringContaining("limits.evaluationsQueuedPerKey") });
      expect((await begin("theirs", b.key)).status).toBe(202);
    } finally {
      for (const { id, key } of started) await post(ctx.server, `/api/v1/evaluations/${id}/cancel`, {}, key);
      model.release();
    }
    // Cancelled ones free their places.
    expect((await start("held", a.key)).status).toBe(202);
  }, 60_000);

  it("are refused over limits.evaluationRuns (cases × repeats) naming the field, and suites over limits.suiteBytes", async () => {
    await put("big", { workflow: "no-retry", cases: cases("big", 30) }, a.key);
    const many = await start("big", a.key, { repeat: 2 });
    expect(many.status).toBe(400);
    expect(many.json.errors).toEqual([{ path: "/repeat", message: expect.stringContaining("30 cases × 2 repeats = 60 case runs; the most one evaluation may make is 40 (limits.evaluationRuns)") }]);
    await put("big", { workflow: "no-retry", repeat: 2, cases: cases("big", 30) }, a.key);
    expect((await start("big", a.key)).json.errors).toEqual([{ path: "/suite/cases", message: expect.stringContaining("= 60 case runs") }]);

    const large = await put("large", { workflow: "no-retry", cases: [{ name: "one", input: "x".repeat(20_000) }] }, a.key);
    expect(large.status).toBe(413);
    expect(large.json).toMatchObject({ code: "payload_too_large", errors: [{ path: "", message: expect.stringContaining("limits.suiteBytes") }] });
    expect((await get(ctx.server, "/api/v1/suites/large", a.key)).status).toBe(404);
  });

  it("share one stored copy of the suite version they run, and the evaluations themselves hold none", async () => {
    await put("shared", { workflow: "no-retry", cases: cases("shared", 2) }, b.key);
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) ids.push((await start("shared", b.key)).json.id);
    await put("shared", { workflow: "no-retry", description: "version 2", cases: cases("shared", 2) }, b.key);
    ids.push((await start("shared", b.key)).json.id);
    for (const id of ids) expect((await ended(id, b.key)).status).toBe("completed");
    const db = new Database(path.join(ctx.server.dataDir, "genserve.sqlite"), { readonly: true });
    try {
      const rows = db.prepare("SELECT suite_version, COUNT(*) AS n FROM suite_snapshots WHERE suite_slug = 'shared' GROUP BY suite_version ORDER BY suite_version").all();
      expect(rows).toEqual([
        { suite_version: 1, n: 1 },
        { suite_version: 2, n: 1 },
      ]);
      const columns = db.prepare("SELECT name FROM pragma_table_info('evaluations')").all().map((c) => (c as { name: string }).name);
      expect(columns).not.toContain("document");
    } finally {
      db.close();
    }
    // Each evaluation reports the version it ran.
    expect((await Promise.all(ids.map((id) => report(id, b.key)))).map((r) => r.suiteVersion)).toEqual([1, 1, 2]);
  });
});
