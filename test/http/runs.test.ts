import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CALLBACK, testConfig } from "../helpers/config";
import type { FakeUpstream } from "../helpers/fake-upstream";
import { useGenserve } from "../helpers/suite";
import { cli, createKey, get, post, startGenserve, tempDir, writeConfig, type GenserveServer } from "../helpers/genserve";
import { awayFromMinuteEdge } from "../helpers/minute";

const ctx = useGenserve();
let upstream: FakeUpstream;
let server: GenserveServer;
let admin: string;
let alice: { id: string; key: string };
let bob: { id: string; key: string };

beforeAll(async () => {
  ({ upstream, server, key: admin } = ctx);
  [alice, bob] = await Promise.all([createKey("alice", { dataDir: server.dataDir }), createKey("bob", { dataDir: server.dataDir })]);
});

const textRun = (key: string, workflowSlug = "no-retry", input = "Quokka facts") =>
  post(server, "/api/v1/generate/text", { input, type: "event", callback: CALLBACK, workflowSlug }, key);

describe("runs and ownership", () => {
  it("shows a key only its own runs; an admin key sees all", async () => {
    const a = await textRun(alice.key);
    const b = await textRun(bob.key);
    expect(a.status).toBe(200);
    const aId = a.json.metadata.runId;
    const bId = b.json.metadata.runId;

    expect((await get(server, `/api/v1/runs/${aId}`, alice.key)).status).toBe(200);
    const foreign = await get(server, `/api/v1/runs/${aId}`, bob.key);
    expect(foreign.status).toBe(404);
    expect(foreign.json.code).toBe("run_not_found");
    expect(foreign.text).not.toContain("Quokka");
    expect((await get(server, `/api/v1/runs/${aId}`, admin)).status).toBe(200);
    expect((await get(server, "/api/v1/runs/run_nope", alice.key)).json.code).toBe("run_not_found");

    const aliceList = (await get(server, "/api/v1/runs", alice.key)).json.runs.map((r: { id: string }) => r.id);
    expect(aliceList).toContain(aId);
    expect(aliceList).not.toContain(bId);
    const adminList = (await get(server, "/api/v1/runs?limit=100", admin)).json.runs.map((r: { id: string }) => r.id);
    expect(adminList).toEqual(expect.arrayContaining([aId, bId]));
  });

  it("lists newest first with filters and cursor paging", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await textRun(bob.key, "extract-invoice", `run ${i}`)).json.metadata.runId);
    upstream.reply({ status: 400 });
    const failed = await textRun(bob.key, "no-retry");
    expect(failed.status).toBe(502);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { json: { runs: { id: string; workflowSlug: string }[]; nextCursor: string | null } } = await get(
        server,
        `/api/v1/runs?workflowSlug=extract-invoice&limit=2${cursor ? `&cursor=${cursor}` : ""}`,
        bob.key,
      );
      expect(page.json.runs.length).toBeLessThanOrEqual(2);
      expect(page.json.runs.every((r) => r.workflowSlug === "extract-invoice")).toBe(true);
      seen.push(...page.json.runs.map((r) => r.id));
      cursor = page.json.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());

    const failedRuns = (await get(server, "/api/v1/runs?status=failed", bob.key)).json.runs;
    expect(failedRuns.map((r: { id: string }) => r.id)).toEqual([failed.json.runId]);
    expect(failedRuns[0].error.code).toBe("model_error");

    const texts = (await get(server, "/api/v1/runs?operation=generate.text&limit=100", bob.key)).json.runs;
    expect(texts.length).toBeGreaterThanOrEqual(6);
    expect((await get(server, "/api/v1/runs?operation=stream.object", bob.key)).json.runs).toEqual([]);
    expect((await get(server, "/api/v1/runs?status=done", bob.key)).status).toBe(400);
    expect((await get(server, "/api/v1/runs?limit=0", bob.key)).status).toBe(400);
    expect((await get(server, "/api/v1/runs?cursor=garbage", bob.key)).json.errors[0].path).toBe("?cursor");
  });

  it("finds runs by their input or id, and by when they were created", async () => {
    const before = new Date(Date.now() - 1).toISOString();
    const wombat = (await textRun(alice.key, "no-retry", "Wombat WEIGHTS, in kilograms")).json.metadata.runId;
    const other = (await textRun(alice.key, "no-retry", "Koala facts")).json.metadata.runId;
    const after = new Date(Date.now() + 1).toISOString();
    const ids = async (query: string, key = alice.key) => (await get(server, `/api/v1/runs?${query}`, key)).json.runs.map((r: { id: string }) => r.id);
    expect(await ids("q=wombat%20weights")).toEqual([wombat]);
    expect(await ids(`q=${other}`)).toEqual([other]);
    // Another key's runs are not found by their text.
    expect(await ids("q=wombat", bob.key)).toEqual([]);
    expect(await ids(`from=${encodeURIComponent(before)}&to=${encodeURIComponent(after)}&limit=100`)).toEqual([other, wombat]);
    expect(await ids(`to=${encodeURIComponent(before)}&limit=100`)).not.toContain(wombat);
    expect(await ids(`from=${encodeURIComponent(after)}`)).toEqual([]);
    const bad = await get(server, "/api/v1/runs?from=yesterday", alice.key);
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0]).toMatchObject({ path: "?from", message: expect.stringMatching(/ISO 8601/) });
  });

  it("lists workflows and contexts for any key", async () => {
    const workflows = await get(server, "/api/v1/workflows", alice.key);
    expect(workflows.json.workflows).toContainEqual({
      slug: "extract-invoice",
      description: "Extract the fields of an invoice",
      model: "fast",
      contexts: ["invoice-rules"],
      instructionsChars: "You extract invoice fields from the text you are given.\n".length,
      version: "config",
      source: "config",
    });
    const contexts = await get(server, "/api/v1/contexts", alice.key);
    expect(contexts.json.contexts).toContainEqual({ slug: "invoice-rules", title: "Invoice rules", size: "Amounts are in EUR unless stated.\n".length, version: "config", source: "config" });
  });

  it("logs JSON lines carrying the run id, never the key", async () => {
    const res = await textRun(alice.key);
    const runId = res.json.metadata.runId;
    await new Promise((r) => setTimeout(r, 100));
    const lines = server.output().split("\n").filter((l) => l.includes(runId));
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(JSON.parse(line).runId).toBe(runId);
    expect(server.output()).not.toContain(alice.key);
    expect(server.output()).not.toContain("sk-test");
  });

  it("lists runs from the CLI while the server runs", async () => {
    const out = JSON.parse(await cli(["runs", "list", "--json", "--limit", "3"], { dataDir: server.dataDir })) as { id: string }[];
    expect(out).toHaveLength(3);
    expect(out[0]!.id).toMatch(/^run_/);
  });
});

describe("service endpoints", () => {
  it("serves health, readiness, the OpenAPI document and the reference page", async () => {
    expect((await get(server, "/healthz", null)).json).toEqual({ status: "ok" });
    expect((await get(server, "/readyz", null)).json).toMatchObject({ status: "ready", storage: "sqlite", workflows: 6 });
    const doc = await get(server, "/api/v1/openapi.json", null);
    expect(doc.json.openapi).toBe("3.1.0");
    expect(Object.keys(doc.json.paths)).toEqual(expect.arrayContaining(["/api/v1/generate/object", "/api/v1/stream/object", "/api/v1/generate/text"]));
    // The schema may come from the workflow version's default.
    expect(doc.json.components.schemas.GenerateObjectRequest.required).toEqual(["input", "type", "callback", "workflowSlug"]);
    const page = await fetch(`${server.url}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("/api/v1/generate/object");
    expect(html).toContain('id="error-output_invalid"');
  });

  it("answers unknown API paths with a 404 problem", async () => {
    const res = await get(server, "/api/v1/nothing/here", alice.key);
    expect(res.status).toBe(404);
    expect(res.json.code).toBe("not_found");
  });
});

describe("process lifecycle", () => {
  beforeEach(() => upstream.reset());
  /** Waits until the fake upstream has received `n` requests: the run is then in flight. */
  const upstreamReceived = async (n: number) => {
    for (let i = 0; i < 200 && upstream.requests.length < n; i++) await new Promise((r) => setTimeout(r, 25));
    expect(upstream.requests.length).toBeGreaterThanOrEqual(n);
  };

  it("marks a run interrupted by kill -9 as failed on the next start", async () => {
    const dir = tempDir();
    const configFile = writeConfig(dir, testConfig(upstream.url));
    const first = await startGenserve({ configFile, dataDir: `${dir}/data` });
    upstream.reply({ delayMs: 10_000 });
    const inFlight = post(first, "/api/v1/generate/text", { input: "slow", type: "event", callback: CALLBACK, workflowSlug: "no-retry" }, first.adminKey!).catch(() => null);
    await upstreamReceived(1);
    await first.stop("SIGKILL");
    await inFlight;
    const running = JSON.parse(await cli(["runs", "list", "--json", "--status", "running"], { dataDir: `${dir}/data` })) as unknown[];
    expect(running.length).toBeGreaterThanOrEqual(1);

    const second = await startGenserve({ configFile, dataDir: `${dir}/data` });
    try {
      expect(second.adminKey).toBeNull(); // keys existed: no new admin key
      const runs = (await get(second, "/api/v1/runs?status=failed", first.adminKey!)).json.runs;
      expect(runs.length).toBe(running.length);
      expect(runs[0].error).toMatchObject({ code: "interrupted" });
      expect((await get(second, "/api/v1/runs?status=running", first.adminKey!)).json.runs).toEqual([]);
    } finally {
      await second.stop();
    }
  });

  it("finishes an in-flight run on SIGTERM before exiting", async () => {
    const dir = tempDir();
    const configFile = writeConfig(dir, testConfig(upstream.url));
    const srv = await startGenserve({ configFile, dataDir: `${dir}/data` });
    upstream.reply({ delayMs: 1_500, content: "finished", usage: { prompt_tokens: 1, completion_tokens: 1 } });
    const inFlight = post(srv, "/api/v1/generate/text", { input: "x", type: "event", callback: CALLBACK, workflowSlug: "no-retry" }, srv.adminKey!);
    await upstreamReceived(1);
    const exit = srv.stop("SIGTERM");
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(res.json.text).toBe("finished");
    expect(await exit).toBe(0);
    const stored = JSON.parse(await cli(["runs", "show", res.json.metadata.runId], { dataDir: `${dir}/data` }));
    expect(stored.status).toBe("succeeded");
  });

  it("limits how many runs a key starts per minute with 429 and Retry-After", async () => {
    const dir = tempDir();
    const srv = await startGenserve({ configFile: writeConfig(dir, testConfig(upstream.url, "limits:\n  runsPerMinute: 2\n")), dataDir: `${dir}/data` });
    try {
      const other = await createKey("other", { dataDir: `${dir}/data` });
      const run = (key: string) => post(srv, "/api/v1/generate/text", { input: "x", type: "event", callback: CALLBACK, workflowSlug: "no-retry" }, key);
      await awayFromMinuteEdge();
      expect((await run(srv.adminKey!)).status).toBe(200);
      expect((await run(srv.adminKey!)).status).toBe(200);
      const limited = await run(srv.adminKey!);
      expect(limited.status).toBe(429);
      expect(limited.json.code).toBe("rate_limited");
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
      expect((await run(other.key)).status).toBe(200); // per key
      expect((await get(srv, "/api/v1/runs", srv.adminKey!)).status).toBe(200); // reads are not limited
    } finally {
      await srv.stop();
    }
  });

  it("refuses a --config file that does not exist (with none given, embedded defaults apply: local-model.test.ts)", async () => {
    const dir = tempDir();
    const missing = await startGenserve({ configFile: path.join(dir, "absent.yaml"), dataDir: `${dir}/data` }).catch((e: Error) => e);
    expect((missing as Error).message).toContain("file not found");
  });

  it("refuses a bad configuration, naming the file, the path and why", async () => {
    const dir = tempDir();
    const configFile = writeConfig(
      dir,
      `models:\n  m:\n    provider: nope\n    model: x\nworkflows:\n  w:\n    model: missing\ncontexts:\n  c:\n    file: ./nowhere.md\n`,
    );
    const run = promisify(execFile);
    const error = await run(process.execPath, ["bin/genserve.mjs", "config", "check", "--config", configFile], { cwd: path.resolve(import.meta.dirname, "../..") }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((error as { code: number }).code).toBe(2);
    const stderr = (error as { stderr: string }).stderr;
    expect(stderr).toContain(configFile);
    expect(stderr).toContain('models.m.provider: unknown provider "nope"');
  });
});
