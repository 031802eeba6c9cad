import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { INVOICE_SCHEMA, testConfig } from "../helpers/config";
import type { ReceivedRequest } from "../helpers/fake-upstream";
import { cli, createKey, get, post, startGenserve, tempDir, writeConfig } from "../helpers/genserve";
import { startReceiver, waitUntil } from "../helpers/receiver";
import { useGenserve } from "../helpers/suite";

// Test suites and their evaluations over real HTTP, against the fake upstream: suite documents,
// every case run an ordinary run, totals per case and field, repeats and stability, baselines,
// judges, cancel, restart in the middle, the progress stream, ownership and the callback.

const CONFIG = `
network:
  allowPrivate: true
limits:
  callbackRetryScheduleMs: [200, 300]
  callbackPollMs: 100
  evaluationConcurrency: 3
`;
const ctx = useGenserve(CONFIG);
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let user: { id: string; key: string; webhookSecret: string };
let other: { id: string; key: string; webhookSecret: string };

beforeAll(async () => {
  receiver = await startReceiver();
  user = await createKey("suites", { dataDir: ctx.server.dataDir });
  other = await createKey("someone-else", { dataDir: ctx.server.dataDir });
});
afterAll(async () => receiver?.close());
beforeEach(() => receiver.reset());

const put = async (slug: string, body: unknown, key = user.key) => {
  const response = await fetch(`${ctx.server.url}/api/v1/suites/${slug}`, { method: "PUT", headers: { "content-type": "application/json", "api-key": key }, body: JSON.stringify(body) });
  return { status: response.status, json: (await response.json()) as any };
};
const start = (slug: string, body: Record<string, unknown> = {}, key = user.key) => post(ctx.server, `/api/v1/suites/${slug}/evaluations`, body, key);
const report = async (id: string, key = user.key) => (await get(ctx.server, `/api/v1/evaluations/${id}`, key)).json;
const finished = async (id: string, key = user.key, timeoutMs = 20_000) => {
  await waitUntil(async () => ["completed", "failed", "cancelled"].includes((await report(id, key)).status), `evaluation ${id} to end`, timeoutMs);
  return report(id, key);
};

/** The last user message the model was sent (the case's input). */
const inputOf = (body: ReceivedRequest["body"]) => {
  const last = [...body.messages].reverse().find((m) => m.role === "user")!;
  return typeof last.content === "string" ? last.content : JSON.stringify(last.content);
};

const INVOICES = {
  suite: "invoices",
  workflow: "no-retry",
  schema: INVOICE_SCHEMA,
  cases: [
    { name: "simple", input: "Invoice INV-7: one chair, 120.50 EUR", expect: { "/number": { equals: "INV-7" }, "/total": { approx: 120.5, tolerance: 0.01 }, "/currency": { oneOf: ["EUR"] } } },
    { name: "dollars", input: "Invoice INV-8: 30 USD", expect: { "/number": { matches: "(?i)^inv-8$" }, "/currency": { equals: "USD" }, "/lines": { absent: true } } },
    { name: "lines", input: "Invoice INV-9: a desk", expect: { "/lines": { length: { min: 1 } }, "/lines/0/description": { contains: "desk" } } },
  ],
};

/** What the model answers for each case's input: `variant` flips which case comes out wrong. */
function invoiceModel(variant: "first" | "second") {
  return (body: ReceivedRequest["body"]) => {
    const input = inputOf(body);
    if (input.includes("INV-7")) return { content: JSON.stringify({ number: "INV-7", total: variant === "first" ? 120.5 : 99, currency: "EUR" }) };
    if (input.includes("INV-8")) return { content: JSON.stringify({ number: "inv-8", total: 30, currency: variant === "first" ? "EUR" : "USD" }) };
    if (input.includes("INV-9")) return { content: JSON.stringify({ number: "INV-9", total: 1, currency: "EUR", lines: [{ description: "a desk" }] }) };
    return undefined;
  };
}

describe("suite documents", () => {
  it("are refused with every problem named by its path, stored with a version per change, and owned by their key", async () => {
    const bad = await put("broken", {
      suite: "other-name",
      schemaFile: "./invoice.json",
      cases: [
        { name: "a", input: "x", expect: { total: { equals: 1 }, "/n": { matches: "(?<=a)b" }, "/m": { tolerance: 1, approx: 1, absent: true } } },
        { name: "a", input: "y" },
      ],
    });
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe("validation_failed");
    expect(bad.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(
      ["/cases/0/expect/~1m/absent", "/cases/0/expect/total", "/cases/1/name", "/schemaFile", "/suite"].sort(),
    );
    // Once the shape is right, the patterns are compiled on RE2 and the schema screened as a run would.
    const pattern = await put("broken", { schema: { type: "object", properties: { a: { type: "strin" } } }, cases: [{ name: "a", input: "x", expect: { "/n": { matches: "(?<=a)b" } } }] });
    expect(pattern.status).toBe(400);
    expect(pattern.json.errors.map((e: { path: string }) => e.path)).toEqual(expect.arrayContaining(["/cases/0/expect/~1n/matches", "/schema/properties/a/type"]));

    const created = await put("invoices", INVOICES);
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ slug: "invoices", version: 1, keyId: user.id, document: { workflow: "no-retry" } });
    const changed = await put("invoices", { ...INVOICES, description: "Invoice extraction" });
    expect(changed.status).toBe(200);
    expect(changed.json.version).toBe(2);

    expect((await get(ctx.server, "/api/v1/suites/invoices", other.key)).status).toBe(404);
    expect((await put("invoices", INVOICES, other.key)).status).toBe(409);
    expect((await get(ctx.server, "/api/v1/suites", other.key)).json.suites).toEqual([]);
    const listed = (await get(ctx.server, "/api/v1/suites", ctx.key)).json.suites;
    expect(listed).toContainEqual(expect.objectContaining({ slug: "invoices", cases: 3, workflow: "no-retry", description: "Invoice extraction", version: 2 }));
  });
});

describe("evaluations", () => {
  it("runs every case as an ordinary run, checks every field, and reports cases, fields, stability, cost and the signed callback", async () => {
    const { version } = (await put("invoices", INVOICES)).json;
    // Repeat 2: the "dollars" case passes once and fails once (unstable).
    let dollars = 0;
    const base = invoiceModel("first");
    ctx.upstream.respondWith((body) => (inputOf(body).includes("INV-8") && dollars++ % 2 === 1 ? invoiceModel("second")(body) : base(body)));
    const started = await start("invoices", { repeat: 2, callback: { url: receiver.url, customProperties: { build: 7 } } });
    expect(started.status).toBe(202);
    expect(started.headers.get("location")).toBe(`/api/v1/evaluations/${started.json.id}`);
    const result = await finished(started.json.id);

    expect(result.status).toBe("completed");
    expect(result.target).toMatchObject({ workflowSlug: "no-retry", model: null, operation: "generate.object", repeat: 2, concurrency: 3, baselineId: null });
    expect(result.totals).toMatchObject({ cases: 3, runs: 6, done: 6, passed: 5, failed: 1, errors: 0, passRate: 5 / 6, casesPassed: 2, inputTokens: 66, outputTokens: 42 });
    expect(Number(result.totals.costUsd)).toBe(0); // the "free" model has no price
    const byName = Object.fromEntries(result.cases.map((c: { name: string }) => [c.name, c]));
    expect(byName.simple).toMatchObject({ passed: 2, passRate: 1, stable: true });
    expect(byName.dollars).toMatchObject({ passed: 1, passRate: 0.5, stable: false });
    expect(byName.dollars.fields).toEqual([
      { path: "/number", checks: 2, passed: 2, passRate: 1, stable: true },
      { path: "/currency", checks: 2, passed: 1, passRate: 0.5, stable: false },
      { path: "/lines", checks: 2, passed: 2, passRate: 1, stable: true },
    ]);
    expect(byName.lines).toMatchObject({ passed: 2, stable: true });
    expect(byName.lines.runs[0].checks).toEqual([
      { path: "/lines", check: "length", pass: true, expected: { min: 1 }, actual: [{ description: "a desk" }] },
      { path: "/lines/0/description", check: "contains", pass: true, expected: "desk", actual: "a desk" },
    ]);
    expect(result.fields).toContainEqual({ path: "/currency", checks: 4, passed: 3, passRate: 0.75, stable: false });

    // Each case run is an ordinary run of the key, readable like any other, and linked to the evaluation.
    const runId = byName.simple.runs[0].runId;
    expect((await get(ctx.server, `/api/v1/runs/${runId}`, user.key)).json).toMatchObject({ status: "succeeded", workflowSlug: "no-retry", output: { number: "INV-7" }, evaluationId: started.json.id });
    const linked = (await get(ctx.server, `/api/v1/runs?evaluationId=${started.json.id}&limit=100`, user.key)).json.runs;
    expect(linked).toHaveLength(6);
    expect((await get(ctx.server, "/api/v1/runs?evaluationId=nope", user.key)).json.errors[0].path).toBe("?evaluationId");

    await waitUntil(() => receiver.received.length >= 1, "the evaluation.completed callback");
    const { headers, body } = receiver.received[0]!;
    const event = new Webhook(user.webhookSecret.replace(/^whsec_/, "")).verify(body, {
      "webhook-id": headers["webhook-id"] as string,
      "webhook-timestamp": headers["webhook-timestamp"] as string,
      "webhook-signature": headers["webhook-signature"] as string,
    }) as any;
    expect(event).toMatchObject({ type: "evaluation.completed", data: { evaluationId: started.json.id, suite: "invoices", suiteVersion: version, status: "completed", totals: { passRate: 5 / 6 }, customProperties: { build: 7 } } });
  });

  it("fails a case whose expectation does not hold, naming the field, the check, the value and why", async () => {
    await put("lines-only", { workflow: "no-retry", schema: INVOICE_SCHEMA, cases: [{ name: "lines", input: "Invoice INV-9", expect: { "/lines/0/description": { matches: "^desk$" }, "/lines/1": { present: true } } }] });
    ctx.upstream.respondWith(invoiceModel("first"));
    const result = await finished((await start("lines-only")).json.id);
    expect(result.cases[0].runs[0].checks).toEqual([
      { path: "/lines/0/description", check: "matches", pass: false, expected: "^desk$", actual: "a desk", reason: 'does not match /^desk$/: "a desk"' },
      { path: "/lines/1", check: "present", pass: false, expected: true, reason: "is missing" },
    ]);
    expect(result.totals).toMatchObject({ passed: 0, failed: 1, checks: { passed: 0, failed: 2 } });
  });

  it("records a run that fails as the case's error, and compares with a baseline: newly failing, newly passing, changed fields", async () => {
    await put("invoices", INVOICES);
    ctx.upstream.respondWith(invoiceModel("first"));
    const first = await finished((await start("invoices")).json.id);
    expect(first.cases.map((c: { passed: number }) => c.passed)).toEqual([1, 0, 1]);

    // Now the first case comes out wrong, the second right, and the third is not JSON at all.
    const second = invoiceModel("second");
    ctx.upstream.respondWith((body) => (inputOf(body).includes("INV-9") ? { content: "not json" } : second(body)));
    const started = await start("invoices", { baseline: "latest" });
    const result = await finished(started.json.id);
    expect(result.target.baselineId).toBe(first.id);
    expect(result.cases[2].runs[0]).toMatchObject({ status: "error", error: { code: "output_invalid" }, checks: [] });
    expect(result.cases[2].runs[0].runId).toMatch(/^run_/);
    expect(result.totals).toMatchObject({ passed: 1, failed: 1, errors: 1 });
    expect(result.baseline).toMatchObject({
      id: first.id,
      newlyFailing: [
        { case: "simple", paths: ["/total"] },
        { case: "lines", paths: ["/lines", "/lines/0/description"] },
      ],
      newlyPassing: ["dollars"],
      passRateDelta: 1 / 3 - 2 / 3,
    });
    expect(result.baseline.changed).toEqual(
      expect.arrayContaining([
        { case: "simple", path: "/total", before: 120.5, after: 99 },
        { case: "dollars", path: "/currency", before: "EUR", after: "USD" },
        { case: "lines", path: "/lines", before: [{ description: "a desk" }] },
      ]),
    );
    // A baseline must be an evaluation of the same suite the caller can read.
    expect((await start("invoices", { baseline: "eval_01JUNK" })).json).toMatchObject({ code: "evaluation_not_found", errors: [{ path: "/baseline" }] });
    expect((await start("invoices", { baseline: first.id }, other.key)).status).toBe(404);
  });

  it("asks a judge workflow about judge expectations and reports them apart, with the judge's reason", async () => {
    await put("judged", {
      workflow: "no-retry",
      judgeWorkflow: "no-retry",
      cases: [{ name: "greeting", input: "Say hello", expect: { "": { judge: "is a polite greeting", contains: "hello" } } }],
    });
    ctx.upstream.respondWith((body) => {
      const input = inputOf(body);
      if (input.includes("Criterion: is a polite greeting")) return { content: JSON.stringify({ pass: false, reason: "it is curt" }) };
      return { content: "hello." };
    });
    const result = await finished((await start("judged")).json.id);
    expect(result.target.operation).toBe("generate.text");
    expect(result.cases[0].runs[0].checks).toEqual([
      { path: "", check: "contains", pass: true, expected: "hello", actual: "hello." },
      { path: "", check: "judge", pass: false, expected: "is a polite greeting", actual: "hello.", reason: "it is curt" },
    ]);
    expect(result.totals).toMatchObject({ failed: 1, checks: { passed: 1, failed: 0 }, judged: { passed: 0, failed: 1 } });
    // The judge saw the value it judged.
    expect(ctx.upstream.requests.some((r) => inputOf(r.body).includes('Value: "hello."'))).toBe(true);
  });

  it("runs cases on another model, with their history and contexts, and waits out the key's concurrency limit instead of failing", async () => {
    const limited = await createKey("limited", { dataDir: ctx.server.dataDir });
    await cli(["keys", "update", limited.id, "--concurrency", "1"], { dataDir: ctx.server.dataDir, configFile: ctx.server.configFile });
    await put(
      "chat",
      {
        workflow: "no-retry",
        cases: Array.from({ length: 4 }, (_, i) => ({
          name: `turn ${i}`,
          input: `and now ${i}?`,
          contexts: ["tone"],
          history: [
            { role: "user", content: "first question" },
            { role: "assistant", content: "first answer" },
          ],
          expect: { "": { contains: `and now ${i}?` } },
        })),
      },
      limited.key,
    );
    const result = await finished((await start("chat", { model: "small", concurrency: 3 }, limited.key)).json.id, limited.key, 30_000);
    expect(result.totals).toMatchObject({ done: 4, passed: 4 });
    const sent = ctx.upstream.requests.filter((r) => inputOf(r.body).startsWith("and now"));
    expect(sent).toHaveLength(4);
    for (const request of sent) {
      expect(request.body.model).toBe("fake-small");
      expect(request.body.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
      expect(JSON.stringify(request.body.messages[0])).toContain("Be concise.");
    }
    expect((await start("chat", { model: "nope" }, limited.key)).json).toMatchObject({ code: "validation_failed", errors: [{ path: "/model" }] });
    expect((await start("chat", { concurrency: 10 }, limited.key)).json).toMatchObject({ code: "validation_failed", errors: [{ path: "/concurrency", message: "must be at most 3 (limits.evaluationConcurrency)" }] });
  });

  it("refuses another model to a key limited to workflows (403 naming /model)", async () => {
    // Issue 31, 2.10: such a key runs its workflows as configured (the run API takes no model at
    // all); an evaluation's model alias would reach any configured model, a priced one too.
    const limited = await createKey("workflow-limited", { dataDir: ctx.server.dataDir });
    await cli(["keys", "update", limited.id, "--workflows", "no-retry"], { dataDir: ctx.server.dataDir, configFile: ctx.server.configFile });
    await put("limited", { workflow: "no-retry", cases: [{ name: "a", input: "limited case" }] }, limited.key);
    const refused = await start("limited", { model: "fast" }, limited.key);
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ code: "forbidden", errors: [{ path: "/model", message: expect.stringContaining('model "fast" is not allowed for this key') }] });
    // Refused before the alias is looked up: the key is not told which aliases exist.
    expect((await start("limited", { model: "nope" }, limited.key)).json).toMatchObject({ code: "forbidden", errors: [{ path: "/model" }] });
    expect(ctx.upstream.requests.some((r) => r.body.model === "fake-7b")).toBe(false);
    // Naming the workflow's own model changes nothing, and is allowed.
    const same = await start("limited", { model: "free" }, limited.key);
    expect(same.status).toBe(202);
    expect((await finished(same.json.id, limited.key)).status).toBe("completed");
  });

  it("stops at once when the key's budget is spent, as a failed evaluation saying why", async () => {
    const poor = await createKey("poor", { dataDir: ctx.server.dataDir });
    await cli(["keys", "update", poor.id, "--budget-daily", "0.000000001"], { dataDir: ctx.server.dataDir, configFile: ctx.server.configFile });
    await put("priced", { workflow: "extract-invoice", schema: INVOICE_SCHEMA, cases: [{ name: "one", input: "Invoice INV-7" }, { name: "two", input: "Invoice INV-8" }] }, poor.key);
    const result = await finished((await start("priced", {}, poor.key)).json.id, poor.key);
    expect(result).toMatchObject({ status: "failed", error: { code: "budget_exceeded" }, totals: { done: 0 } });
  });

  it("is cancelled at once: no case run starts after it, and one in flight is cancelled", async () => {
    await put("slow", { workflow: "no-retry", cases: Array.from({ length: 12 }, (_, i) => ({ name: `case ${i}`, input: `slow ${i}` })) });
    ctx.upstream.respondWith(() => ({ content: "ok", delayMs: 400 }));
    const callback = { url: "https://hook:pw-secret@example.com/h", headers: { Authorization: "Bearer eval-secret" } };
    const id = (await start("slow", { concurrency: 1, callback })).json.id;
    await waitUntil(async () => (await report(id)).totals.done >= 1, "a first result");
    const cancelled = await post(ctx.server, `/api/v1/evaluations/${id}/cancel`, {}, user.key);
    expect(cancelled.status).toBe(200);
    expect(cancelled.json.status).toBe("cancelled");
    const done = cancelled.json.totals.done;
    await new Promise((r) => setTimeout(r, 1_200));
    const after = await report(id);
    expect(after.status).toBe("cancelled");
    expect(after.totals.done).toBeLessThanOrEqual(done + 1);
    expect(after.totals.done).toBeLessThan(12);
    // The callback is shown as every view shows one: header values and URL credentials masked.
    expect(after.target.callback).toEqual({ url: "https://%5Bhidden%5D@example.com/h", headers: { Authorization: "[hidden]" } });
    expect(JSON.stringify(after)).not.toMatch(/pw-secret|eval-secret/);
    expect((await post(ctx.server, `/api/v1/evaluations/${id}/cancel`, {}, user.key)).json.code).toBe("conflict");
    expect((await get(ctx.server, `/api/v1/evaluations/${id}`, other.key)).status).toBe(404);
    // The run that was in flight ended cancelled.
    const runs = (await get(ctx.server, "/api/v1/runs?limit=5", user.key)).json.runs;
    expect(runs.some((r: { status: string; error: { code: string } | null }) => r.status === "cancelled" && r.error?.code === "cancelled")).toBe(true);
  });

  it("streams its progress as server-sent events, resumable after the last result seen", async () => {
    await put("invoices", INVOICES);
    ctx.upstream.respondWith(invoiceModel("first"));
    const id = (await start("invoices", { repeat: 2 })).json.id;
    const response = await fetch(`${ctx.server.url}/api/v1/evaluations/${id}/events`, { headers: { "api-key": user.key } });
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const text = await response.text();
    const events = text.split("\n\n").filter(Boolean).map((block) => Object.fromEntries(block.split("\n").map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 2)])));
    const results = events.filter((e) => e.event === "result");
    expect(results).toHaveLength(6);
    expect(JSON.parse(results[0]!.data!)).toMatchObject({ case: expect.any(String), repeat: expect.any(Number), status: expect.stringMatching(/passed|failed/), runId: expect.stringMatching(/^run_/) });
    expect(JSON.parse(events.filter((e) => e.event === "progress").at(-1)!.data!)).toMatchObject({ done: 6, total: 6, passed: 4, failed: 2 });
    const end = events.at(-1)!;
    expect(end.event).toBe("end");
    expect(JSON.parse(end.data!)).toMatchObject({ id, status: "completed", totals: { done: 6 } });

    const resumed = await fetch(`${ctx.server.url}/api/v1/evaluations/${id}/events`, { headers: { "api-key": user.key, "last-event-id": results[3]!.id! } });
    const again = (await resumed.text()).split("\n\n").filter((b) => b.includes("event: result"));
    expect(again).toHaveLength(2);
  });
});

describe("an evaluation cut by a restart", () => {
  it("resumes where it was: every case runs to a result exactly once, and the evaluation completes", async () => {
    const dir = tempDir();
    const configFile = writeConfig(dir, testConfig(ctx.upstream.url, "limits:\n  evaluationConcurrency: 2\n  shutdownGraceMs: 200\n"));
    let server = await startGenserve({ configFile, dataDir: `${dir}/data` });
    const key = server.adminKey!;
    try {
      const cases = Array.from({ length: 10 }, (_, i) => ({ name: `c${i}`, input: `restart ${i}`, expect: { "": { contains: `restart ${i}` } } }));
      const response = await fetch(`${server.url}/api/v1/suites/restart`, { method: "PUT", headers: { "content-type": "application/json", "api-key": key }, body: JSON.stringify({ workflow: "no-retry", cases }) });
      expect(response.status).toBe(201);
      ctx.upstream.respondWith(() => ({ delayMs: 300 }));
      const id = (await post(server, "/api/v1/suites/restart/evaluations", {}, key)).json.id;
      await waitUntil(async () => (await get(server, `/api/v1/evaluations/${id}`, key)).json.totals.done >= 2, "some results");
      await server.stop("SIGKILL");
      server = await startGenserve({ configFile, dataDir: `${dir}/data` });
      await waitUntil(async () => (await get(server, `/api/v1/evaluations/${id}`, key)).json.status === "completed", "the evaluation to complete after the restart");
      const result = (await get(server, `/api/v1/evaluations/${id}`, key)).json;
      expect(result.totals).toMatchObject({ runs: 10, done: 10, passed: 10 });
      expect(result.cases.map((c: { runs: unknown[] }) => c.runs.length)).toEqual(Array(10).fill(1));
    } finally {
      await server.stop();
    }
  }, 120_000);
});
