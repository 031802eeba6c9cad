import { beforeAll, describe, expect, it } from "vitest";
import { CALLBACK, INVOICE_SCHEMA } from "../helpers/config";
import type { ReceivedRequest } from "../helpers/fake-upstream";
import { cli, createKey, get, post } from "../helpers/genserve";
import { waitUntil } from "../helpers/receiver";
import { useGenserve } from "../helpers/suite";

// The workflow lifecycle over real HTTP against the fake upstream: versions as bundles (pinned
// contexts, default schemas), addressing by version and label in every operation and threads,
// label moves and their history, the diff with its breaking-change verdicts, promotion gated by a
// suite, rollback, replay (identical and on another version) and share links (masking, expiry,
// revocation, no leakage).

const ctx = useGenserve("network:\n  allowPrivate: true\n");
let user: { id: string; key: string };

beforeAll(async () => {
  user = await createKey("lifecycle-user", { dataDir: ctx.server.dataDir });
});

const call = async (method: string, path: string, body?: unknown, key = ctx.key) => {
  const response = await fetch(`${ctx.server.url}${path}`, {
    method,
    headers: { "api-key": key, ...(body !== undefined && { "content-type": "application/json" }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: text ? JSON.parse(text) : undefined, text };
};
const systemOf = (request: ReceivedRequest) => String(request.body.messages.find((m) => m.role === "system")?.content ?? "");

describe("workflow versions as bundles", () => {
  it("pins contexts to the version they had, uses a version's default schema, and addresses versions and labels in every operation", async () => {
    expect((await call("PUT", "/api/v1/contexts/glossary", { content: "GLOSSARY ONE" })).status).toBe(201);
    const v1 = await call("PUT", "/api/v1/workflows/bundle", { model: "fast", instructions: "INSTRUCTIONS ONE", contexts: ["glossary"], schema: { type: "object", properties: { a: { type: "string" } }, required: ["a"] } });
    expect(v1.status).toBe(201);
    expect(v1.json).toMatchObject({ version: "1", contextVersions: { glossary: "1" } });
    // A later context change does not change what version 1 means.
    await call("PUT", "/api/v1/contexts/glossary", { content: "GLOSSARY TWO" });
    const v2 = await call("PUT", "/api/v1/workflows/bundle", { model: "fast", instructions: "INSTRUCTIONS TWO", contexts: ["glossary"] });
    expect(v2.json).toMatchObject({ version: "2", contextVersions: { glossary: "2" } });

    ctx.upstream.reply({ content: JSON.stringify({ a: "x" }) });
    const first = await post(ctx.server, "/api/v1/generate/object", { input: "hello", type: "event", callback: CALLBACK, workflowSlug: "bundle@1" }, user.key);
    expect(first.status).toBe(200);
    expect(systemOf(ctx.upstream.requests.at(-1)!)).toContain("INSTRUCTIONS ONE");
    expect(systemOf(ctx.upstream.requests.at(-1)!)).toContain("GLOSSARY ONE");
    expect(ctx.upstream.requests.at(-1)!.body.response_format?.json_schema?.schema).toMatchObject({ required: ["a"] });
    const run = (await get(ctx.server, `/api/v1/runs/${first.json.metadata.runId}`, user.key)).json;
    expect(run).toMatchObject({ workflowSlug: "bundle", workflowVersion: "1", workflowLabel: null, contextVersions: { glossary: "1" }, schema: { required: ["a"] } });

    // Version 2 has no default schema: an object run without one names the field and the version.
    const refused = await post(ctx.server, "/api/v1/generate/object", { input: "hello", type: "event", callback: CALLBACK, workflowSlug: "bundle" }, user.key);
    expect(refused.status).toBe(400);
    expect(refused.json.errors).toEqual([{ path: "/schema", message: 'is required: workflow "bundle" (version 2) has no default schema' }]);

    // Labels: a plain slug follows `production`; `slug@label` in stream/object, text and threads.
    expect((await call("PUT", "/api/v1/workflows/bundle/labels/production", { version: 1 })).json).toMatchObject({ label: "production", version: "1", previous: null, outcome: "moved" });
    expect((await call("PUT", "/api/v1/workflows/bundle/labels/staging", { version: "2" })).status).toBe(200);
    ctx.upstream.reply({ content: JSON.stringify({ a: "y" }) });
    const viaProduction = await post(ctx.server, "/api/v1/generate/object", { input: "hello", type: "event", callback: CALLBACK, workflowSlug: "bundle" }, user.key);
    expect(viaProduction.status).toBe(200);
    expect((await get(ctx.server, `/api/v1/runs/${viaProduction.json.metadata.runId}`, user.key)).json).toMatchObject({ workflowVersion: "1", workflowLabel: "production" });
    const text = await post(ctx.server, "/api/v1/generate/text", { input: "hello", type: "event", callback: CALLBACK, workflowSlug: "bundle@staging" }, user.key);
    expect(text.status).toBe(200);
    expect(systemOf(ctx.upstream.requests.at(-1)!)).toContain("INSTRUCTIONS TWO");
    expect((await get(ctx.server, `/api/v1/runs/${text.json.metadata.runId}`, user.key)).json).toMatchObject({ workflowVersion: "2", workflowLabel: "staging" });
    const stream = await fetch(`${ctx.server.url}/api/v1/stream/object`, { method: "POST", headers: { "content-type": "application/json", "api-key": user.key }, body: JSON.stringify({ input: "hi", workflowSlug: "bundle@1" }) });
    expect(stream.status).toBe(200);
    await stream.text();
    const thread = await post(ctx.server, "/api/v1/threads", { workflowSlug: "bundle@staging" }, user.key);
    expect(thread.status).toBe(201);
    expect(thread.json.workflowSlug).toBe("bundle@staging");

    // Unknown parts are 404s that say which.
    const cases: [string, string][] = [
      ["bundle@9", 'Workflow "bundle" has no version 9'],
      ["bundle@canary", 'Workflow "bundle" has no label "canary"'],
      ["nothing@1", 'unknown workflow "nothing"'],
      ["extract-invoice@3", 'Workflow "extract-invoice" comes from the configuration file; its only version is "config"'],
    ];
    for (const [ref, message] of cases) {
      const answer = await post(ctx.server, "/api/v1/generate/text", { input: "x", type: "event", callback: CALLBACK, workflowSlug: ref }, user.key);
      expect(answer.status, ref).toBe(404);
      expect(answer.json).toMatchObject({ code: "workflow_not_found", errors: [{ path: "/workflowSlug", message }] });
    }
    expect((await post(ctx.server, "/api/v1/generate/text", { input: "x", type: "event", callback: CALLBACK, workflowSlug: "bundle@" }, user.key)).status).toBe(400);
    expect((await get(ctx.server, "/api/v1/workflows/bundle%40staging", user.key)).json).toMatchObject({ version: "2", label: "staging" });
  });

  it("keeps every label move with who made it and from where, lists versions with their labels, and rolls back at once", async () => {
    await call("PUT", "/api/v1/workflows/roll", { model: "fast", instructions: "one" });
    await call("PUT", "/api/v1/workflows/roll", { model: "fast", instructions: "two" });
    await call("PUT", "/api/v1/workflows/roll/labels/production", { version: 1 });
    await call("PUT", "/api/v1/workflows/roll/labels/production", { version: 2 });
    const back = await call("PUT", "/api/v1/workflows/roll/labels/production", { version: 1 });
    expect(back.json).toMatchObject({ version: "1", previous: "2" });
    const labels = (await call("GET", "/api/v1/workflows/roll/labels")).json;
    expect(labels.labels).toEqual([expect.objectContaining({ label: "production", version: "1" })]);
    expect(labels.history.map((m: { version: string; previous: string | null }) => [m.version, m.previous])).toEqual([["1", "2"], ["2", "1"], ["1", null]]);
    const versions = (await call("GET", "/api/v1/workflows/roll/versions")).json;
    expect(versions.versions.map((v: { version: string; labels: string[] }) => [v.version, v.labels])).toEqual([["1", ["production"]], ["2", []]]);

    // Only admin keys move labels; a missing version is refused; the configuration's workflows take `config` only.
    expect((await call("PUT", "/api/v1/workflows/roll/labels/production", { version: 2 }, user.key)).status).toBe(403);
    expect((await call("PUT", "/api/v1/workflows/roll/labels/production", { version: 7 })).json).toMatchObject({ code: "workflow_not_found", errors: [{ path: "/version" }] });
    expect((await call("PUT", "/api/v1/workflows/roll/labels/42", { version: 1 })).status).toBe(400);
    expect((await call("PUT", "/api/v1/workflows/extract-invoice/labels/production", { version: "config" })).status).toBe(200);
    // The command line moves labels too, recorded as the operator's.
    const storage = { dataDir: ctx.server.dataDir, configFile: ctx.server.configFile };
    expect(await cli(["workflows", "label", "roll@2", "staging"], storage)).toBe("roll: staging → 2\n");
    await expect(cli(["workflows", "label", "roll@9", "staging"], storage)).rejects.toThrow(/has no version 9/);
    expect((await call("GET", "/api/v1/workflows/roll@staging")).json).toMatchObject({ version: "2", label: "staging" });
    expect(await cli(["workflows", "labels", "roll"], storage)).toMatch(/staging\s+moved\s+2\s+cli/);
    expect((await call("DELETE", "/api/v1/workflows/roll/labels/production")).status).toBe(204);
    expect((await call("GET", "/api/v1/workflows/roll")).json).toMatchObject({ version: "2", label: null });
  });
});

describe("the diff of two versions", () => {
  it("shows instructions line by line, parameters, contexts re-pinned, and classifies schema changes", async () => {
    await call("PUT", "/api/v1/contexts/terms", { content: "T1" });
    const schema = { type: "object", properties: { total: { type: "number" }, currency: { enum: ["EUR", "USD"] }, email: { type: "string" } }, required: ["total"] };
    await call("PUT", "/api/v1/workflows/diffed", { model: "fast", instructions: "Line one.\nLine two.\nLine three.", contexts: ["terms"], schema });
    await call("PUT", "/api/v1/contexts/terms", { content: "T2" });
    const narrower = { ...schema, properties: { total: { type: "integer" }, currency: { enum: ["EUR", "USD", "GBP"] }, note: { type: "string" } } };
    await call("PUT", "/api/v1/workflows/diffed", { model: "free", temperature: 0.2, instructions: "Line one.\nLine 2.\nLine three.", contexts: ["terms", "tone"], schema: narrower });
    await call("PUT", "/api/v1/workflows/diffed/labels/staging", { version: 2 });
    const diff = await call("GET", "/api/v1/workflows/diffed/diff?from=1&to=staging");
    expect(diff.status).toBe(200);
    expect(diff.json.instructions.hunks[0].lines).toEqual([" Line one.", "-Line two.", "+Line 2.", " Line three."]);
    expect(diff.json.parameters).toEqual([
      { name: "model", from: "fast", to: "free" },
      { name: "temperature", from: null, to: 0.2 },
    ]);
    expect(diff.json.contexts).toEqual({ added: ["tone"], removed: [], repinned: [{ slug: "terms", from: "1", to: "2" }] });
    expect(diff.json.schema.breaking).toBe(true);
    const verdicts = Object.fromEntries(diff.json.schema.changes.map((c: { path: string; breaking: boolean }) => [c.path, c.breaking]));
    expect(verdicts).toMatchObject({ "/properties/email": true, "/properties/note": false, "/properties/total/type": true, "/properties/currency/enum": false });
    expect(diff.json.before.instructions).toContain("Line two.");

    const bad = await call("GET", "/api/v1/workflows/diffed/diff?from=1&to=9");
    expect(bad.json).toMatchObject({ code: "workflow_not_found", errors: [{ path: "to", message: 'Workflow "diffed" has no version 9' }] });
    expect((await call("GET", "/api/v1/workflows/diffed/diff?from=1")).status).toBe(400);
  });
});

describe("promotion gated by a suite", () => {
  it("moves the label only when the suite passes against the version, and records the evaluation either way", async () => {
    const schema = { type: "object", properties: { n: { type: "string" } }, required: ["n"] };
    await call("PUT", "/api/v1/workflows/gated", { model: "free", instructions: "old", retries: 0, schema });
    await call("PUT", "/api/v1/workflows/gated", { model: "free", instructions: "new", retries: 0, schema });
    await call("PUT", "/api/v1/workflows/gated/labels/production", { version: 1 });
    await call("PUT", "/api/v1/suites/gate", { workflow: "gated", cases: [{ name: "a", input: "A", expect: { "/n": { equals: "ok" } } }, { name: "b", input: "B", expect: { "/n": { equals: "ok" } } }] });

    // The new version answers wrongly for one case of two: 0.5 < 0.95, refused.
    ctx.upstream.respondWith((body) => {
      const instructions = systemOf({ body } as ReceivedRequest);
      const input = JSON.stringify(body.messages.at(-1)?.content);
      return { content: JSON.stringify({ n: instructions.includes("new") && input.includes("B") ? "wrong" : "ok" }) };
    });
    const refused = await call("POST", "/api/v1/workflows/gated/labels/production", { version: 2, requireSuite: "gate", minPass: 0.95 });
    expect(refused.status).toBe(202);
    expect(refused.headers.get("location")).toBe(`/api/v1/evaluations/${refused.json.evaluationId}`);
    const outcome = async (evaluationId: string) => {
      await waitUntil(async () => (await call("GET", "/api/v1/workflows/gated/labels")).json.history.some((m: { evaluationId: string }) => m.evaluationId === evaluationId), "the promotion to be decided");
      return (await call("GET", "/api/v1/workflows/gated/labels")).json;
    };
    let labels = await outcome(refused.json.evaluationId);
    expect(labels.history[0]).toMatchObject({ outcome: "refused", version: "2", previous: "1", passRate: 0.5, evaluationId: refused.json.evaluationId });
    expect(labels.labels).toEqual([expect.objectContaining({ label: "production", version: "1" })]);
    expect((await call("GET", `/api/v1/evaluations/${refused.json.evaluationId}`)).json.target).toMatchObject({ workflowSlug: "gated@2", promotion: { label: "production", version: "2", minPass: 0.95 } });

    // With the lower bar it passes and the label moves, linked to its evaluation.
    const passed = await call("POST", "/api/v1/workflows/gated/labels/production", { version: 2, requireSuite: "gate", minPass: 0.5 });
    labels = await outcome(passed.json.evaluationId);
    expect(labels.history[0]).toMatchObject({ outcome: "moved", version: "2", previous: "1", evaluationId: passed.json.evaluationId });
    expect(labels.labels[0]).toMatchObject({ version: "2", evaluationId: passed.json.evaluationId });

    // Rollback is instant; a promotion to a version that does not exist, or with an unknown suite, is refused at once.
    expect((await call("PUT", "/api/v1/workflows/gated/labels/production", { version: 1 })).json).toMatchObject({ version: "1", previous: "2" });
    expect((await call("POST", "/api/v1/workflows/gated/labels/production", { version: 5, requireSuite: "gate" })).status).toBe(404);
    expect((await call("POST", "/api/v1/workflows/gated/labels/production", { version: 2, requireSuite: "no-such-suite" })).json.code).toBe("suite_not_found");
    expect((await call("POST", "/api/v1/workflows/gated/labels/production", { version: 2, minPass: 0.5 })).json.errors).toEqual([{ path: "/minPass", message: "needs requireSuite" }]);
  });
});

describe("replay", () => {
  it("runs the same bundle again even after the workflow and its context changed, or another version, with the differences", async () => {
    await call("PUT", "/api/v1/contexts/facts", { content: "FACTS ONE" });
    await call("PUT", "/api/v1/workflows/replayed", { model: "fast", instructions: "REPLAY ONE", contexts: ["facts"] });
    ctx.upstream.reply({ content: JSON.stringify({ number: "INV-1", total: 10, currency: "EUR" }) });
    const original = await post(ctx.server, "/api/v1/generate/object", { input: "Invoice INV-1", type: "event", callback: CALLBACK, workflowSlug: "replayed", schema: INVOICE_SCHEMA }, user.key);
    expect(original.status).toBe(200);
    await call("PUT", "/api/v1/contexts/facts", { content: "FACTS TWO" });
    await call("PUT", "/api/v1/workflows/replayed", { model: "fast", instructions: "REPLAY TWO", contexts: ["facts"] });

    ctx.upstream.reply({ content: JSON.stringify({ number: "INV-1", total: 10, currency: "EUR" }) });
    const same = await call("POST", `/api/v1/runs/${original.json.metadata.runId}/replay`, undefined, user.key);
    expect(same.status).toBe(201);
    expect(same.json).toMatchObject({ originalRunId: original.json.metadata.runId, workflowSlug: "replayed@1", identical: true, differences: [] });
    expect(systemOf(ctx.upstream.requests.at(-1)!)).toContain("REPLAY ONE");
    expect(systemOf(ctx.upstream.requests.at(-1)!)).toContain("FACTS ONE");
    expect((await get(ctx.server, `/api/v1/runs/${same.json.runId}`, user.key)).json).toMatchObject({ workflowVersion: "1", contextVersions: { facts: "1" } });

    ctx.upstream.reply({ content: JSON.stringify({ number: "INV-1", total: 12, currency: "EUR" }) });
    const other = await call("POST", `/api/v1/runs/${original.json.metadata.runId}/replay`, { workflowSlug: "replayed@2" }, user.key);
    expect(other.json).toMatchObject({ workflowSlug: "replayed@2", identical: false, differences: [{ path: "/total", kind: "changed", left: 10, right: 12 }] });
    expect(systemOf(ctx.upstream.requests.at(-1)!)).toContain("FACTS TWO");

    // Another key cannot replay this run; inline attachments are not kept, so such runs are refused with the reason.
    const stranger = await createKey("replay-stranger", { dataDir: ctx.server.dataDir });
    expect((await call("POST", `/api/v1/runs/${original.json.metadata.runId}/replay`, {}, stranger.key)).status).toBe(404);
    ctx.upstream.reply({ content: "hi" });
    const withFile = await post(ctx.server, "/api/v1/generate/text", { input: "read", type: "event", callback: CALLBACK, workflowSlug: "replayed", attachments: [{ file: Buffer.from("hello").toString("base64"), mimeType: "text/plain" }] }, user.key);
    const inline = await call("POST", `/api/v1/runs/${withFile.json.metadata.runId}/replay`, {}, user.key);
    expect(inline.status).toBe(409);
    expect(inline.json.errors).toEqual([{ path: "/attachments/0", message: "sent inline and not kept" }]);
  });
});

describe("share links", () => {
  it("show a run without a key, with hidden fields masked, and never the key, the callback or its secrets; expire and revoke", async () => {
    ctx.upstream.reply({ content: JSON.stringify({ number: "INV-SECRET", total: 5, currency: "USD" }), chunkSize: 4, chunkDelayMs: 5 });
    const callback = { url: "http://127.0.0.1:9/hook", headers: { Authorization: "Bearer receiver-secret-123" } };
    const run = await post(ctx.server, "/api/v1/generate/object", { input: "Invoice for share", type: "event", workflowSlug: "extract-invoice", schema: INVOICE_SCHEMA, callback }, user.key);
    expect(run.status).toBe(200);
    const runId = run.json.metadata.runId;
    const made = await call("POST", `/api/v1/runs/${runId}/share`, { expiresIn: "1d", hideFields: ["/number"] }, user.key);
    expect(made.status).toBe(201);
    expect(made.json.url).toMatch(/\/s\/[A-Za-z0-9_-]{43}$/);
    const token = made.json.url.split("/s/")[1];

    const shared = await fetch(`${ctx.server.url}/api/v1/shared/${token}`);
    expect(shared.status).toBe(200);
    const body = await shared.text();
    const view = JSON.parse(body);
    expect(view.run).toMatchObject({ input: "Invoice for share", output: { number: "[hidden]", total: 5, currency: "USD" }, workflowSlug: "extract-invoice", status: "succeeded" });
    for (const secret of [user.key, ctx.key, "receiver-secret-123", "INV-SECRET", "127.0.0.1:9", user.id, runId]) expect(body, secret).not.toContain(secret);
    const page = await fetch(`${ctx.server.url}/s/${token}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    for (const secret of [user.key, ctx.key, "receiver-secret-123", "INV-SECRET"]) expect(html).not.toContain(secret);

    // Listed for its key (and an admin), not another's; revoked links and wrong tokens are the same 404.
    expect((await call("GET", "/api/v1/shares", undefined, user.key)).json.shares.map((s: { id: string }) => s.id)).toContain(made.json.id);
    expect((await call("GET", "/api/v1/shares", undefined, user.key)).json.shares[0].url).toBeUndefined();
    const stranger = await createKey("share-stranger", { dataDir: ctx.server.dataDir });
    expect((await call("POST", `/api/v1/runs/${runId}/share`, {}, stranger.key)).status).toBe(404);
    expect((await call("DELETE", `/api/v1/shares/${made.json.id}`, undefined, stranger.key)).status).toBe(404);
    expect((await call("DELETE", `/api/v1/shares/${made.json.id}`, undefined, user.key)).status).toBe(204);
    expect((await fetch(`${ctx.server.url}/api/v1/shared/${token}`)).status).toBe(404);
    expect((await fetch(`${ctx.server.url}/api/v1/shared/${"x".repeat(43)}`)).status).toBe(404);

    // Expiry: a link that lasts a minute still works; one whose time has passed does not (made directly, in the past).
    expect((await call("POST", `/api/v1/runs/${runId}/share`, { expiresIn: "400d" }, user.key)).json.errors).toEqual([{ path: "/expiresIn", message: "must be at most 365d" }]);
    expect((await call("POST", `/api/v1/runs/${runId}/share`, { expiresIn: "soon" }, user.key)).status).toBe(400);
    const noBody = await call("POST", `/api/v1/runs/${runId}/share`, undefined, user.key);
    expect(noBody.status).toBe(201);
    expect(Date.parse(noBody.json.expiresAt) - Date.now()).toBeGreaterThan(6.9 * 86_400_000);
  });

  it("shows a streamed run with its pace, and an evaluation report without run ids", async () => {
    ctx.upstream.reply({ content: JSON.stringify({ number: "INV-P", total: 1, currency: "EUR" }), chunkSize: 4, chunkDelayMs: 30 });
    const stream = await fetch(`${ctx.server.url}/api/v1/stream/object`, { method: "POST", headers: { "content-type": "application/json", "api-key": user.key }, body: JSON.stringify({ input: "paced", workflowSlug: "extract-invoice", schema: INVOICE_SCHEMA }) });
    const runId = stream.headers.get("x-run-id")!;
    await stream.text();
    await waitUntil(async () => (await get(ctx.server, `/api/v1/runs/${runId}`, user.key)).json.status === "succeeded", "the streamed run to be recorded");
    const link = (await call("POST", `/api/v1/runs/${runId}/share`, {}, user.key)).json.url as string;
    const view = await (await fetch(`${ctx.server.url}/api/v1/shared/${link.split("/s/")[1]}`)).json();
    const pace = view.run.pace as [number, number][];
    expect(pace.length).toBeGreaterThan(3);
    expect(pace.at(-1)![1]).toBe(JSON.stringify({ number: "INV-P", total: 1, currency: "EUR" }).length);
    expect(pace.every(([t, n], i) => i === 0 || (t >= pace[i - 1]![0] && n >= pace[i - 1]![1]))).toBe(true);

    await call("PUT", "/api/v1/suites/shared-suite", { workflow: "extract-invoice", schema: INVOICE_SCHEMA, cases: [{ name: "one", input: "x", expect: { "/number": { equals: "N-1" } } }] }, user.key);
    ctx.upstream.respondWith(() => ({ content: JSON.stringify({ number: "N-1", total: 1, currency: "EUR" }) }));
    const evaluation = await post(ctx.server, "/api/v1/suites/shared-suite/evaluations", {}, user.key);
    await waitUntil(async () => (await get(ctx.server, `/api/v1/evaluations/${evaluation.json.id}`, user.key)).json.status === "completed", "the evaluation");
    const shared = (await call("POST", `/api/v1/evaluations/${evaluation.json.id}/share`, { hideFields: ["/number"] }, user.key)).json.url as string;
    const report = await (await fetch(`${ctx.server.url}/api/v1/shared/${shared.split("/s/")[1]}`)).json();
    expect(report.kind).toBe("evaluation");
    expect(report.evaluation.cases[0].runs[0]).toMatchObject({ runId: null, output: { number: "[hidden]" }, checks: [{ path: "/number", actual: "[hidden]", expected: "[hidden]", pass: true }] });
  });
});
