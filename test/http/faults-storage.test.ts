import Database from "better-sqlite3";
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INVOICE_SCHEMA, testConfig } from "../helpers/config";
import { startFakeUpstream, type FakeUpstream } from "../helpers/fake-upstream";
import { createKey, get, post, startGenserve, tempDir, writeConfig, type GenserveServer } from "../helpers/genserve";
import { startReceiver, waitUntil } from "../helpers/receiver";
import { streamRequest } from "../helpers/streams";

// Storage faults (issue 31): the data directory on a small filesystem of its own, filled up while
// the server runs. The other storage faults of the suite live beside the tests they extend: SIGKILL
// under heavy writes in hardening-restart.test.ts, PostgreSQL going away under load in
// replicas.test.ts ("when the database goes away").

/** Mounts a tmpfs of `mb` MiB on `dir`; the reason it cannot, or null. */
function mountSmallFilesystem(dir: string, mb: number): string | null {
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${mb}m`, "tmpfs", dir], { stdio: "pipe" });
    return null;
  } catch (error) {
    return `cannot mount a tmpfs on ${dir} (${String((error as { stderr?: Buffer }).stderr ?? (error as Error).message).trim()}); run as root to include these tests`;
  }
}

/** Writes `file` until the filesystem is full. */
function fillUp(file: string): void {
  const fd = openSync(file, "w");
  const chunk = Buffer.alloc(256 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  } finally {
    closeSync(fd);
  }
}

const root = tempDir();
const dataDir = path.join(root, "data");
mkdirSync(dataDir);
// Whether mounting works is tried on a scratch directory (mounted and unmounted at once); the data
// directory is mounted only when the tests run, so a filtered run leaves nothing mounted.
const probe = path.join(root, "probe");
mkdirSync(probe);
const cannotMount = mountSmallFilesystem(probe, 1);
if (!cannotMount) execFileSync("umount", [probe], { stdio: "pipe" });
if (cannotMount && process.env.CI) throw new Error(`the storage fault suite must run in CI: ${cannotMount}`);
if (cannotMount) process.stderr.write(`skipping the full-disk tests: ${cannotMount}\n`);

describe.runIf(!cannotMount)("a data directory whose disk fills up", () => {
  let upstream: FakeUpstream;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let server: GenserveServer;
  let key: string;
  beforeAll(async () => {
    const failed = mountSmallFilesystem(dataDir, 16);
    if (failed) throw new Error(failed);
    upstream = await startFakeUpstream();
    receiver = await startReceiver();
    const configFile = writeConfig(root, testConfig(upstream.url, "network:\n  allowPrivate: true\nlimits:\n  runLeaseMs: 2000\n"));
    server = await startGenserve({ configFile, dataDir });
    key = server.adminKey!;
  });
  afterAll(async () => {
    await server?.stop().catch(() => undefined);
    await receiver?.close();
    await upstream?.close();
    try {
      execFileSync("umount", [dataDir], { stdio: "pipe" });
    } catch {
      // Left mounted only if the server could not stop: the reason is in the failure above.
    }
  });

  it("refuses writes with 503 storage_full and Retry-After, is not ready meanwhile, serves reads, keeps every answered run, and is back once space is freed", async () => {
    const run = (input = "x") => post(server, "/api/v1/generate/text", { input, type: "event", workflowSlug: "no-retry", callback: { url: receiver.url } }, key);
    const answered = new Set<string>();
    /** Runs that answered 200 are remembered; anything else must be storage_full. */
    const attempt = async (input?: string) => {
      const res = await run(input);
      if (res.status === 200) answered.add(res.json.metadata.runId);
      return res;
    };
    for (let i = 0; i < 5; i++) expect((await attempt()).status).toBe(200);
    const inbox = (await post(server, "/api/v1/inbox", {}, key)).json as { id: string; url: string };
    // Keys never used yet: their first request writes when they were last used (best effort).
    const fresh = await Promise.all(Array.from({ length: 3 }, (_, i) => createKey(`fresh-${i}`, { dataDir })));
    await waitUntil(() => receiver.received.length === 5, "the callbacks of the first runs");
    // The write-ahead log emptied into the database file first, so that every write from now on
    // needs new space (a log with room left would take a few more writes before failing).
    await waitUntil(() => {
      const db = new Database(path.join(dataDir, "genserve.sqlite"));
      try {
        db.pragma("busy_timeout = 1000");
        return (db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[])[0]!.busy === 0 && statSync(path.join(dataDir, "genserve.sqlite-wal")).size === 0;
      } finally {
        db.close();
      }
    }, "an empty write-ahead log");
    const filler = path.join(dataDir, "filler");
    fillUp(filler);

    // Writes are refused — a run's admission, a stream's, an inbox's creation, a delivery to one —
    // clearly and retryably; whatever writes still fitted answered as usual.
    const refusedRun = await (async () => {
      for (let i = 0; i < 50; i++) {
        const res = await attempt("y".repeat(100_000));
        if (res.status !== 200) return res;
      }
      throw new Error("runs were still stored on a full disk");
    })();
    expect(refusedRun.status).toBe(503);
    expect(refusedRun.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(refusedRun.json).toMatchObject({ code: "storage_full", status: 503 });
    expect(Number(refusedRun.headers.get("retry-after"))).toBeGreaterThan(0);
    const small = await attempt();
    expect([small.status, small.json.code]).toEqual([503, "storage_full"]);
    const stream = await streamRequest(server.url, key, { input: "x", schema: INVOICE_SCHEMA, workflowSlug: "extract-invoice" });
    expect([stream.status, stream.headers.get("content-type"), Number(stream.headers.get("retry-after")) > 0]).toEqual([503, "application/problem+json", true]);
    expect(await stream.json()).toMatchObject({ code: "storage_full" });
    const created = await post(server, "/api/v1/inbox", {}, key);
    expect([created.status, created.json.code]).toEqual([503, "storage_full"]);
    const delivered = await fetch(inbox.url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect([delivered.status, ((await delivered.json()) as { code: string }).code]).toEqual([503, "storage_full"]);
    // Reads go on: a key's first request (which would record its use) and listings answer.
    for (const k of fresh) {
      const me = await get(server, "/api/v1/me", k.key);
      expect([me.status, me.json?.keyId]).toEqual([200, k.id]);
    }
    expect((await get(server, `/api/v1/keys/${fresh[0]!.id}`, key)).json.lastUsedAt).toBeNull(); // its use was not recorded
    expect((await get(server, "/api/v1/runs?limit=100", key)).status).toBe(200);
    expect((await get(server, "/healthz", null)).status).toBe(200);
    const notReady = await get(server, "/readyz", null);
    expect([notReady.status, notReady.json.status]).toEqual([503, "not ready"]);
    expect(notReady.json.reason).toMatch(/full/);

    rmSync(filler);
    await waitUntil(async () => (await get(server, "/readyz", null)).status === 200, "ready again once space is freed", 30_000);
    expect((await attempt()).status).toBe(200);
    expect((await post(server, "/api/v1/inbox", {}, key)).status).toBe(201);
    expect((await fetch(inbox.url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status).toBe(204);
    const resumed = await streamRequest(server.url, key, { input: "x", schema: INVOICE_SCHEMA, workflowSlug: "extract-invoice" });
    expect(resumed.status).toBe(200);
    await resumed.text();
    // A run whose end could not be written is ended by reconciliation, never left running.
    await waitUntil(async () => (await get(server, "/api/v1/runs?status=running", key)).json.runs.length === 0, "no run left running", 30_000);
    expect(await server.stop()).toBe(0);

    // Nothing half-written: the file is sound, every run that answered 200 is there and succeeded,
    // and none was left running.
    const db = new Database(path.join(dataDir, "genserve.sqlite"), { readonly: true });
    try {
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
      const runs = new Map(db.prepare<[], { id: string; status: string }>("SELECT id, status FROM runs").all().map((r) => [r.id, r.status]));
      for (const id of answered) expect(runs.get(id)).toBe("succeeded");
      expect([...runs.values()].filter((s) => s === "running")).toEqual([]);
    } finally {
      db.close();
    }
  }, 180_000);
});
