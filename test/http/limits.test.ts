import { describe, expect, it } from "vitest";
import { CALLBACK, INVOICE_SCHEMA } from "../helpers/config";
import { cli, get, post } from "../helpers/genserve";
import { awayFromMinuteEdge } from "../helpers/minute";
import { waitUntil } from "../helpers/receiver";
import { readSse, streamRequest } from "../helpers/streams";
import { useGenserve } from "../helpers/suite";

// Per-key limits and budgets over real HTTP on one SQLite server: the admin API and CLI that set
// them, the 429/402/403 answers and headers, and what runs settle to. The same admission on
// PostgreSQL across two replicas is in replicas.test.ts.
const ctx = useGenserve();

async function request(method: string, path: string, key: string, body?: unknown) {
  const response = await fetch(`${ctx.server.url}${path}`, {
    method,
    headers: { "api-key": key, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: text ? JSON.parse(text) : undefined };
}

/** A key made through the admin API with these limits. */
async function keyWith(limits: Record<string, unknown>, name = "limited"): Promise<{ id: string; key: string }> {
  const res = await request("POST", "/api/v1/keys", ctx.key, { name, limits });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return { id: res.json.id, key: res.json.key };
}

const textRun = (key: string, workflowSlug = "no-retry", headers: Record<string, string> = {}) =>
  post(ctx.server, "/api/v1/generate/text", { input: "x", type: "event", callback: CALLBACK, workflowSlug }, key, headers);

describe("keys through the admin API", () => {
  it("creates, lists, shows, changes and revokes keys with their limits; other keys may not", async () => {
    const created = await request("POST", "/api/v1/keys", ctx.key, {
      name: "team-a",
      limits: { rpm: 30, tpm: 20000, concurrency: 2, workflows: ["no-retry"], budgetDailyUsd: "1.5", budgetMonthlyUsd: 20 },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe(`/api/v1/keys/${created.json.id}`);
    expect(created.json.key).toMatch(/^gs_/);
    expect(created.json.webhookSecret).toMatch(/^whsec_/);
    expect(created.json.limits).toEqual({ rpm: 30, tpm: 20000, concurrency: 2, workflows: ["no-retry"], budgetDailyUsd: "1.5", budgetMonthlyUsd: "20" });

    const list = await request("GET", "/api/v1/keys", ctx.key);
    expect(list.status).toBe(200);
    const listed = list.json.keys.find((k: { id: string }) => k.id === created.json.id);
    expect(listed.limits.rpm).toBe(30);
    expect(JSON.stringify(list.json)).not.toContain(created.json.key);

    // The CLI sees the same key and changes it; the API sees the change.
    const table = await cli(["keys", "list"], { dataDir: ctx.server.dataDir });
    expect(table).toMatch(/LIMITS/);
    expect(table).toContain("rpm 30, tpm 20000, concurrency 2, $1.5/day, $20/month, workflows no-retry");
    await cli(["keys", "update", created.json.id, "--rpm", "none", "--budget-daily", "2.25", "--workflows", "no-retry,extract-invoice"], { dataDir: ctx.server.dataDir });
    const shown = await request("GET", `/api/v1/keys/${created.json.id}`, ctx.key);
    expect(shown.json.limits).toMatchObject({ rpm: null, budgetDailyUsd: "2.25", workflows: ["no-retry", "extract-invoice"] });
    expect(shown.json.quotas.map((q: { policy: string }) => q.policy)).toEqual(["tpm", "concurrency", "daily", "monthly"]);

    const patched = await request("PATCH", `/api/v1/keys/${created.json.id}`, ctx.key, { name: "team-b", limits: { concurrency: null, tpm: 5000 } });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ name: "team-b", limits: { concurrency: null, tpm: 5000, budgetDailyUsd: "2.25" } });

    // Not for other keys, even with limits of their own.
    for (const [method, path] of [["GET", "/api/v1/keys"], ["POST", "/api/v1/keys"], ["PATCH", `/api/v1/keys/${created.json.id}`], ["DELETE", `/api/v1/keys/${created.json.id}`]] as const) {
      const res = await request(method, path, created.json.key, method === "GET" || method === "DELETE" ? undefined : { name: "x" });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.json.code).toBe("forbidden");
    }

    expect((await request("DELETE", `/api/v1/keys/${created.json.id}`, ctx.key)).status).toBe(204);
    expect((await textRun(created.json.key)).status).toBe(401);
    expect((await request("DELETE", `/api/v1/keys/${created.json.id}`, ctx.key)).status).toBe(404);
  });

  it("refuses bad limits naming every field, and never revokes the last admin key", async () => {
    const bad = await request("POST", "/api/v1/keys", ctx.key, { name: "", limits: { rpm: 0, tpm: 1.5, concurrency: "two", workflows: ["../x"], budgetDailyUsd: "-1", budgetMonthlyUsd: "1e3", extra: 1 } });
    expect(bad.status).toBe(400);
    const paths = bad.json.errors.map((e: { path: string }) => e.path).sort();
    expect(paths).toEqual(["/limits/budgetDailyUsd", "/limits/budgetMonthlyUsd", "/limits/concurrency", "/limits/extra", "/limits/rpm", "/limits/tpm", "/limits/workflows/0", "/name"]);
    expect((await request("PATCH", "/api/v1/keys/key_nope", ctx.key, { name: "x" })).status).toBe(404);

    const me = await request("GET", "/api/v1/me", ctx.key);
    const revoked = await request("DELETE", `/api/v1/keys/${me.json.keyId}`, ctx.key);
    expect(revoked.status).toBe(409);
    expect(revoked.json.detail).toContain("last active admin key");
    expect((await request("GET", "/api/v1/me", ctx.key)).status).toBe(200);
  });
});

describe("limits on runs", () => {
  it("answers 429 over the runs-per-minute limit with Retry-After and the IETF RateLimit fields; other keys are not affected", async () => {
    const { key } = await keyWith({ rpm: 2 });
    await awayFromMinuteEdge();
    const first = await textRun(key);
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-policy")).toBe('"rpm";q=2;w=60');
    expect(first.headers.get("ratelimit")).toMatch(/^"rpm";r=1;t=\d+$/);
    expect((await textRun(key)).status).toBe(200);
    const limited = await textRun(key);
    expect(limited.status).toBe(429);
    expect(limited.json).toMatchObject({ code: "rate_limited", limit: { policy: "rpm", quota: 2 } });
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get("ratelimit")).toBe(`"rpm";r=0;t=${retryAfter}`);
    // Refused runs leave nothing behind.
    const runs = await get(ctx.server, "/api/v1/runs?limit=100", key);
    expect(runs.json.runs).toHaveLength(2);
    expect((await textRun(ctx.key)).status).toBe(200);
  });

  it("reserves a run's worst-case tokens on the tokens-per-minute limit and settles to what it used", async () => {
    // small-window: 500 output tokens at most; the prompt is a few dozen. 700 holds one run's worst case, not two.
    const { id, key } = await keyWith({ tpm: 700 });
    await awayFromMinuteEdge();
    ctx.upstream.reply({ usage: { prompt_tokens: 30, completion_tokens: 10 } }, { usage: { prompt_tokens: 30, completion_tokens: 10 } });
    const ok = await textRun(key, "small-window");
    expect(ok.status).toBe(200);
    expect(ok.headers.get("ratelimit-policy")).toContain('"tpm";q=700;w=60;qu="tokens"');
    // Settled to 40 tokens, the next run fits again.
    expect((await textRun(key, "small-window")).status).toBe(200);
    const quota = (await request("GET", `/api/v1/keys/${id}`, ctx.key)).json.quotas.find((q: { policy: string }) => q.policy === "tpm");
    expect(quota).toMatchObject({ used: "80", reserved: "0", limit: "700", unit: "tokens" });
    // extract-invoice may write 1024 tokens: never within 700.
    const refused = await post(ctx.server, "/api/v1/generate/object", { input: "Invoice 1", type: "event", callback: CALLBACK, workflowSlug: "extract-invoice", schema: INVOICE_SCHEMA }, key);
    expect(refused.status).toBe(429);
    expect(refused.json.limit.policy).toBe("tpm");
    expect(refused.json.detail).toContain("tokens per minute");
    expect(ctx.upstream.requests).toHaveLength(2);
  });

  it("runs at most `concurrency` runs of a key at once: 429 beyond, and queued async runs wait for a slot", async () => {
    const { key } = await keyWith({ concurrency: 1 });
    ctx.upstream.reply({ delayMs: 1_000, content: "slow" });
    const first = textRun(key);
    await waitUntil(() => ctx.upstream.requests.length === 1, "the first run at the model");
    const second = await textRun(key);
    expect(second.status).toBe(429);
    expect(second.json.limit).toMatchObject({ policy: "concurrency", quota: 1 });
    expect(second.headers.get("ratelimit-policy")).toContain('"concurrency";q=1;qu="concurrent-requests"');
    expect((await first).status).toBe(200);
    expect((await textRun(key)).status).toBe(200); // the slot was freed

    ctx.upstream.reset();
    ctx.upstream.reply({ delayMs: 800, content: "a" }, { delayMs: 800, content: "b" });
    const queued = await Promise.all([0, 1].map(() => textRun(key, "no-retry", { prefer: "respond-async" })));
    expect(queued.map((r) => r.status)).toEqual([202, 202]);
    await waitUntil(() => ctx.upstream.requests.length === 1, "the first queued run at the model");
    await new Promise((r) => setTimeout(r, 400));
    expect(ctx.upstream.requests).toHaveLength(1); // the second waits for the slot
    await waitUntil(() => ctx.upstream.requests.length === 2, "the second queued run at the model");
    for (const r of queued) await waitUntil(async () => (await get(ctx.server, `/api/v1/runs/${r.json.runId}`, key)).json.status === "succeeded", "the queued run");
  });

  it("refuses workflows outside the key's list with 403 naming the field, for runs and threads", async () => {
    const { key } = await keyWith({ workflows: ["no-retry"] });
    expect((await textRun(key, "no-retry")).status).toBe(200);
    const refused = await textRun(key, "extract-invoice");
    expect(refused.status).toBe(403);
    expect(refused.json.code).toBe("forbidden");
    expect(refused.json.errors).toEqual([{ path: "/workflowSlug", message: 'workflow "extract-invoice" is not allowed for this key' }]);
    const thread = await post(ctx.server, "/api/v1/threads", { workflowSlug: "extract-invoice" }, key);
    expect(thread.status).toBe(403);
    expect(ctx.upstream.requests).toHaveLength(1);
  });

  it("answers 402 over a budget naming it and when it resets; generated, streamed and failed runs settle to what they cost", async () => {
    // extract-invoice on `fast` (0.15 / 0.60 USD per million tokens), up to 1024 output tokens: a
    // worst case of about 0.00065 USD a run. The budget (0.0016) holds two such reservations, not three.
    const { id, key } = await keyWith({ budgetDailyUsd: "0.0016", budgetMonthlyUsd: "100" });
    const objectRun = () => post(ctx.server, "/api/v1/generate/object", { input: "Invoice 1", type: "event", callback: CALLBACK, workflowSlug: "extract-invoice", schema: INVOICE_SCHEMA }, key);
    ctx.upstream.reply({ usage: { prompt_tokens: 1000, completion_tokens: 500 } });
    const first = await objectRun();
    expect(first.status).toBe(200);
    expect(first.json.metadata.cost).toBe("0.00045");

    ctx.upstream.reply({ usage: { prompt_tokens: 1000, completion_tokens: 500 } });
    const stream = await streamRequest(ctx.server.url, key, { input: "Invoice 2", workflowSlug: "extract-invoice", schema: INVOICE_SCHEMA });
    expect(stream.status).toBe(200);
    const { events } = await readSse(stream);
    expect(events.at(-1)!.event).toBe("done");

    const spent = () => request("GET", `/api/v1/keys/${id}`, ctx.key).then((r) => r.json.quotas.find((q: { policy: string }) => q.policy === "daily"));
    expect(await spent()).toMatchObject({ used: "0.0009", reserved: "0", limit: "0.0016", unit: "usd" });

    // 0.0009 spent: the next worst case (~0.00065) still fits; after it (0.00045 more), none does.
    ctx.upstream.reply({ usage: { prompt_tokens: 1000, completion_tokens: 500 } });
    expect((await objectRun()).status).toBe(200);
    const refused = await objectRun();
    expect(refused.status).toBe(402);
    expect(refused.json.code).toBe("budget_exceeded");
    const tomorrow = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1)).toISOString();
    expect(refused.json.budget).toEqual({ period: "daily", limitUsd: "0.0016", spentUsd: "0.00135", reservedUsd: "0", resetsAt: tomorrow });
    expect(refused.json.detail).toContain("daily budget of 0.0016 USD");
    expect(refused.headers.get("retry-after")).toBeNull();
    expect(ctx.upstream.requests).toHaveLength(3);

    // The key sees the same through /me.
    const me = await request("GET", "/api/v1/me", key);
    expect(me.json.limits.budgetDailyUsd).toBe("0.0016");
    expect(me.json.quotas.find((q: { policy: string }) => q.policy === "monthly")).toMatchObject({ used: "0.00135", limit: "100" });

    // A failed run costs what its attempts used (here: an upstream error after usage is unknown → 0),
    // and its reservation is released rather than kept.
    await request("PATCH", `/api/v1/keys/${id}`, ctx.key, { limits: { budgetDailyUsd: "0.01" } });
    ctx.upstream.reply({ status: 500 }, { status: 500 }, { status: 500 });
    const failed = await objectRun();
    expect(failed.status).toBe(502);
    expect(await spent()).toMatchObject({ used: "0.00135", reserved: "0" });
  });
});
