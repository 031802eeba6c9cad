import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import OpenAPIBackend, { type Document } from "openapi-backend";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CALLBACK, INVOICE_SCHEMA } from "../helpers/config";
import { createKey } from "../helpers/genserve";
import { waitUntil } from "../helpers/receiver";
import { useGenserve } from "../helpers/suite";

// Every route of /api/v1, answering with success and with errors, checked against the OpenAPI
// document the server publishes (validated with openapi-backend): the documented status, content
// type and body schema. What the document says is what the API does.

const ctx = useGenserve();
let api: OpenAPIBackend;
let user: string;
let viewer: string;
const checked = new Set<string>();
const seenOperations = new Set<string>();

beforeAll(async () => {
  const doc = (await (await fetch(`${ctx.server.url}/api/v1/openapi.json`)).json()) as Document;
  // The document itself against the OpenAPI 3.1 specification's schema.
  const checkedDoc = await new Validator().validate(doc as never);
  expect(checkedDoc.errors ?? [], JSON.stringify(checkedDoc.errors ?? []).slice(0, 2_000)).toEqual([]);
  expect(checkedDoc.valid).toBe(true);
  api = new OpenAPIBackend({
    definition: doc,
    // openapi-backend's own document check knows OpenAPI 3.0 only: the 3.1 check is the one above.
    quick: true,
    validate: true,
    // OpenAPI 3.1 schemas are JSON Schema 2020-12.
    customizeAjv: (_ajv, options) => addFormats(new Ajv2020({ ...options, strict: false })),
  });
  await api.init();
  user = (await createKey("user", { dataDir: ctx.server.dataDir })).key;
  viewer = (await createKey("viewer", { dataDir: ctx.server.dataDir, role: "viewer" })).key;
});
afterAll(() => {
  // Every documented operation was exercised at least once.
  if (!api) return;
  const documented = api.getOperations().map((o) => o.operationId!);
  expect(documented.filter((id) => !seenOperations.has(id))).toEqual([]);
});

/** Sends a request and checks the response against the document; returns it parsed. */
async function call(method: string, path: string, options: { key?: string | null; body?: unknown; headers?: Record<string, string> } = {}) {
  const key = options.key === undefined ? ctx.key : options.key;
  const headers: Record<string, string> = { ...(key ? { "api-key": key } : {}), ...(options.body !== undefined ? { "content-type": "application/json" } : {}), ...options.headers };
  const response = await fetch(`${ctx.server.url}${path}`, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  const text = await response.text();
  const url = new URL(path, ctx.server.url);
  const operation = api.router.matchOperation({ method, path: url.pathname, headers, query: Object.fromEntries(url.searchParams) });
  expect(operation, `${method} ${path} is a documented operation`).toBeDefined();
  seenOperations.add(operation!.operationId!);
  const where = `${method} ${path} → ${response.status} ${text.slice(0, 300)}`;
  const responses = operation!.responses as Record<string, { content?: Record<string, unknown> }>;
  // The OpenAI-compatible operations document their errors as `default` (OpenAI's one error shape).
  const documented = responses[String(response.status)] ?? responses.default;
  expect(documented, `${where}: status documented`).toBeDefined();
  const type = (response.headers.get("content-type") ?? "").split(";")[0]!;
  if (response.status === 204) expect(text, where).toBe("");
  else expect(Object.keys(documented!.content ?? {}), `${where}: content type documented`).toContain(type);
  let json: any;
  if (/json$/.test(type)) {
    json = JSON.parse(text);
    const result = api.validator.validateResponse(json, operation!, response.status);
    expect(result.errors ?? [], where).toEqual([]);
  }
  checked.add(`${operation!.operationId} ${response.status}`);
  return { status: response.status, json, text, headers: response.headers };
}

describe("responses follow the published OpenAPI document", () => {
  it("generate and stream: success, queued, and errors", async () => {
    ctx.upstream.reply({ content: JSON.stringify({ number: "INV-1", total: 1, currency: "EUR" }) });
    const object = await call("POST", "/api/v1/generate/object", { body: { input: "x", type: "event", callback: CALLBACK, workflowSlug: "no-retry", schema: INVOICE_SCHEMA } });
    expect(object.status).toBe(200);
    const queued = await call("POST", "/api/v1/generate/text", { body: { input: "x", type: "event", callback: CALLBACK, workflowSlug: "no-retry" }, headers: { prefer: "respond-async" } });
    expect(queued.status).toBe(202);
    expect((await call("POST", "/api/v1/generate/text", { body: { input: "x", type: "event", callback: CALLBACK, workflowSlug: "no-retry" } })).status).toBe(200);
    expect((await call("POST", "/api/v1/generate/object", { body: { input: "" } })).status).toBe(400);
    expect((await call("POST", "/api/v1/generate/object", { key: null, body: {} })).status).toBe(401);
    expect((await call("POST", "/api/v1/generate/text", { body: { input: "x", type: "event", callback: CALLBACK, workflowSlug: "nope" } })).status).toBe(404);
    ctx.upstream.reply({ status: 500 });
    expect((await call("POST", "/api/v1/generate/text", { body: { input: "x", type: "event", callback: CALLBACK, workflowSlug: "no-retry" } })).status).toBe(502);
    const stream = await call("POST", "/api/v1/stream/object", { body: { input: "x", workflowSlug: "no-retry", schema: INVOICE_SCHEMA } });
    expect(stream.status).toBe(200);
    expect((await call("POST", "/api/v1/stream/object", { body: { input: "x", schema: INVOICE_SCHEMA } })).status).toBe(400);
    const runId = stream.headers.get("x-run-id")!;
    expect((await call("GET", `/api/v1/runs/${runId}/stream`)).status).toBe(200);
    await waitUntil(async () => (await call("GET", `/api/v1/runs/${queued.json.runId}`)).json.status === "succeeded", "the queued run");
  });

  it("runs: list, one, deliveries and redelivery, and errors", async () => {
    const page = await call("GET", "/api/v1/runs?limit=2");
    expect(page.status).toBe(200);
    expect((await call("GET", `/api/v1/runs?cursor=nope`)).status).toBe(400);
    const id = page.json.runs[0].id;
    expect((await call("GET", `/api/v1/runs/${id}`)).status).toBe(200);
    expect((await call("GET", "/api/v1/runs/run_01NOPE")).status).toBe(404);
    const withEvent = page.json.runs.find((r: { operation: string }) => r.operation !== "stream.object");
    expect((await call("POST", `/api/v1/runs/${withEvent.id}/deliveries/redeliver`)).status).toBe(202);
    expect((await call("GET", `/api/v1/runs/${id}/stream`, { key: user })).status).toBe(404);
    // Cancel: a run that ended is a 409, a missing one a 404, and a running one ends cancelled.
    expect((await call("POST", `/api/v1/runs/${withEvent.id}/cancel`)).status).toBe(409);
    expect((await call("POST", "/api/v1/runs/run_01NOPE/cancel")).status).toBe(404);
    let release!: () => void;
    ctx.upstream.reply({ waitFor: new Promise<void>((resolve) => (release = resolve)), content: "held" });
    try {
      const held = await call("POST", "/api/v1/generate/text", { body: { input: "x", type: "event", callback: CALLBACK, workflowSlug: "no-retry" }, headers: { prefer: "respond-async" } });
      await waitUntil(() => ctx.upstream.requests.length === 1, "the model to be called");
      const cancelled = await call("POST", `/api/v1/runs/${held.json.runId}/cancel`);
      expect(cancelled.status).toBe(200);
      expect(cancelled.json).toMatchObject({ id: held.json.runId, status: "cancelled", error: { code: "cancelled" } });
    } finally {
      release();
    }
  });

  it("threads, inboxes, the key, models and the document itself", async () => {
    expect((await call("POST", "/api/v1/threads", { body: { workflowSlug: "no-retry", id: "oa-1" } })).status).toBe(201);
    expect((await call("POST", "/api/v1/threads", { body: { workflowSlug: "no-retry", id: "oa-1" } })).status).toBe(409);
    expect((await call("GET", "/api/v1/threads/oa-1")).status).toBe(200);
    expect((await call("DELETE", "/api/v1/threads/oa-1")).status).toBe(204);
    expect((await call("GET", "/api/v1/threads/oa-1")).status).toBe(404);
    const inbox = await call("POST", "/api/v1/inbox");
    expect(inbox.status).toBe(201);
    const path = new URL(inbox.json.url).pathname;
    expect((await call("POST", path, { key: null, body: { hello: 1 } })).status).toBe(204);
    expect((await call("POST", "/api/v1/inbox/inb_nope", { key: null, body: {} })).status).toBe(404);
    expect((await call("GET", path)).status).toBe(200);
    expect((await call("GET", "/api/v1/me")).status).toBe(200);
    // Who is calling: a key, then a browser that exchanged the key for a session cookie.
    expect((await call("GET", "/api/v1/session")).json).toMatchObject({ via: "key", user: null, csrfToken: null });
    const signedIn = await fetch(`${ctx.server.url}/auth/key`, { method: "POST", headers: { "content-type": "application/json", origin: ctx.server.url }, body: JSON.stringify({ key: ctx.key }) });
    const cookie = signedIn.headers.getSetCookie()[0]!.split(";")[0]!;
    expect((await call("GET", "/api/v1/session", { key: null, headers: { cookie } })).json).toMatchObject({ via: "session", admin: true, csrfToken: expect.any(String) });
    expect((await call("GET", "/api/v1/session", { key: null })).status).toBe(401);
    expect((await call("GET", "/api/v1/models")).status).toBe(200);
    // Retry download: admin keys only, local models only (this server has none: the others conflict).
    expect((await call("POST", "/api/v1/models/fast/download", { key: user })).status).toBe(403);
    expect((await call("POST", "/api/v1/models/nope/download")).status).toBe(404);
    expect((await call("POST", "/api/v1/models/fast/download")).json).toMatchObject({ status: 409, code: "conflict" });
    const check = await call("POST", "/api/v1/schemas/check", { body: { schema: { type: "object", properties: { a: { type: "string" } } }, workflowSlug: "no-retry" } });
    expect(check.json).toMatchObject({ accepted: true, model: { alias: "free" }, support: { mode: "provider" } });
    expect((await call("POST", "/api/v1/schemas/check", { body: { schema: { type: "number" } } })).json).toMatchObject({ accepted: false, support: null });
    expect((await call("POST", "/api/v1/schemas/check", { body: { schema: [] } })).status).toBe(400);
    expect((await call("GET", "/api/v1/openapi.json", { key: null })).status).toBe(200);
    // The check can fail: a wrong type, and a field the document does not list.
    expect(api.validator.validateResponse({ keyId: 1, name: "n", admin: true }, "me", 200).valid).toBe(false);
    expect(api.validator.validateResponse({ keyId: "k", name: "n", admin: true, secret: "x" }, "me", 200).valid).toBe(false);
  });

  it("keys, limits, usage: managed by admin keys; limit answers and usage reports", async () => {
    const made = await call("POST", "/api/v1/keys", { body: { name: "oa-limited", limits: { rpm: 1, budgetDailyUsd: "5", workflows: ["no-retry"] } } });
    expect(made.status).toBe(201);
    expect((await call("POST", "/api/v1/keys", { body: { name: "", limits: { rpm: -1 } } })).status).toBe(400);
    expect((await call("POST", "/api/v1/keys", { key: user, body: { name: "x" } })).status).toBe(403);
    expect((await call("GET", "/api/v1/keys")).status).toBe(200);
    expect((await call("GET", `/api/v1/keys/${made.json.id}`)).status).toBe(200);
    expect((await call("GET", "/api/v1/keys/key_nope")).status).toBe(404);
    // Projects: the default project's admins manage them; a key is made in one with a role.
    const project = await call("POST", "/api/v1/projects", { body: { slug: "oa-project", name: "OpenAPI" } });
    expect(project.status).toBe(201);
    expect((await call("POST", "/api/v1/projects", { body: { slug: "oa-project" } })).status).toBe(409);
    expect((await call("POST", "/api/v1/projects", { key: user, body: { slug: "x" } })).status).toBe(403);
    expect((await call("GET", "/api/v1/projects")).json.projects.map((p: { slug: string }) => p.slug)).toContain("oa-project");
    expect((await call("PATCH", "/api/v1/projects/oa-project", { body: { name: "OpenAPI team" } })).json.name).toBe("OpenAPI team");
    expect((await call("PATCH", "/api/v1/projects/nope", { body: { name: "x" } })).status).toBe(404);
    // Members: the project's admins invite, change roles and remove (test/http/members.test.ts has the people).
    const invite = await call("POST", "/api/v1/members/invites", { body: { email: "oa@example.com", role: "editor" } });
    expect(invite.status).toBe(201);
    expect((await call("POST", "/api/v1/members/invites", { body: { email: "not an email", role: "editor" } })).status).toBe(400);
    expect((await call("POST", "/api/v1/members/invites", { key: user, body: { email: "oa@example.com", role: "editor" } })).status).toBe(403);
    expect((await call("GET", "/api/v1/members")).json.invites.map((i: { id: string }) => i.id)).toContain(invite.json.id);
    expect((await call("DELETE", `/api/v1/members/invites/${invite.json.id}`)).status).toBe(204);
    expect((await call("DELETE", `/api/v1/members/invites/${invite.json.id}`)).status).toBe(404);
    expect((await call("PATCH", "/api/v1/members/usr_nope", { body: { role: "viewer" } })).status).toBe(404);
    expect((await call("PATCH", "/api/v1/members/usr_nope", { body: { role: "owner" } })).status).toBe(400);
    expect((await call("DELETE", "/api/v1/members/usr_nope")).status).toBe(404);
    const viewer = await call("POST", "/api/v1/keys", { body: { name: "oa-viewer", role: "viewer", project: "oa-project" } });
    expect(viewer.json).toMatchObject({ role: "viewer", admin: false, projectId: project.json.id });
    expect((await call("GET", "/api/v1/me", { key: viewer.json.key })).json).toMatchObject({ role: "viewer", project: { slug: "oa-project" } });
    expect((await call("PATCH", `/api/v1/keys/${made.json.id}`, { body: { limits: { tpm: 100000 } } })).status).toBe(200);
    const body = { input: "x", type: "event", callback: CALLBACK, workflowSlug: "no-retry" };
    const first = await call("POST", "/api/v1/generate/text", { key: made.json.key, body });
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-policy")).toContain('"rpm";q=1;w=60');
    expect((await call("POST", "/api/v1/generate/text", { key: made.json.key, body: { ...body, workflowSlug: "extract-invoice" } })).status).toBe(403);
    const limited = await call("POST", "/api/v1/generate/text", { key: made.json.key, body });
    if (limited.status !== 200) expect(limited.status).toBe(429); // (200 only when a new minute began in between)
    expect((await call("PATCH", `/api/v1/keys/${made.json.id}`, { body: { limits: { rpm: null, workflows: null, budgetDailyUsd: "0.000000001" } } })).status).toBe(200);
    expect((await call("POST", "/api/v1/generate/object", { key: made.json.key, body: { ...body, schema: INVOICE_SCHEMA, workflowSlug: "extract-invoice" } })).status).toBe(402);
    // The audit log recorded those changes; its page matches the document, its refusals too.
    const audit = await call("GET", `/api/v1/audit?subject=key:${made.json.id}&limit=2`);
    expect(audit.json.events.map((e: { action: string }) => e.action)).toEqual(["key.limits", "key.limits"]);
    expect((await call("GET", `/api/v1/audit?cursor=${audit.json.nextCursor}&action=key.`)).status).toBe(200);
    expect((await call("GET", "/api/v1/audit?from=yesterday")).status).toBe(400);
    expect((await call("GET", "/api/v1/audit", { key: user })).status).toBe(403);
    expect((await call("GET", "/api/v1/usage?groupBy=model")).status).toBe(200);
    expect((await call("GET", "/api/v1/usage?groupBy=nope")).status).toBe(400);
    expect((await call("GET", "/api/v1/usage", { key: made.json.key })).status).toBe(200);
    expect((await call("DELETE", `/api/v1/keys/${made.json.id}`)).status).toBe(204);
    const me = await call("GET", "/api/v1/me");
    expect((await call("DELETE", `/api/v1/keys/${me.json.keyId}`)).status).toBe(409);
  });

  it("workflows and contexts: read, and managed by admin keys only", async () => {
    expect((await call("GET", "/api/v1/workflows")).status).toBe(200);
    expect((await call("GET", "/api/v1/workflows/no-retry")).status).toBe(200);
    expect((await call("GET", "/api/v1/workflows/nope")).status).toBe(404);
    expect((await call("GET", "/api/v1/contexts")).status).toBe(200);
    expect((await call("GET", "/api/v1/contexts/tone")).status).toBe(200);
    expect((await call("PUT", "/api/v1/contexts/oa-ctx", { body: { content: "Be kind." } })).status).toBe(201);
    expect((await call("PUT", "/api/v1/contexts/oa-ctx", { body: { title: "Kind", content: "Be kinder." } })).status).toBe(200);
    expect((await call("PUT", "/api/v1/contexts/oa-ctx", { key: viewer, body: { content: "no" } })).status).toBe(403);
    expect((await call("PUT", "/api/v1/workflows/oa-wf", { body: { model: "free", contexts: ["oa-ctx"] } })).status).toBe(201);
    expect((await call("PUT", "/api/v1/workflows/oa-wf", { body: { model: "none" } })).status).toBe(400);
    expect((await call("PUT", "/api/v1/workflows/no-retry", { body: { model: "free" } })).status).toBe(409);
    expect((await call("DELETE", "/api/v1/workflows/oa-wf")).status).toBe(204);
    expect((await call("DELETE", "/api/v1/contexts/oa-ctx")).status).toBe(204);
    expect((await call("DELETE", "/api/v1/contexts/oa-ctx")).status).toBe(404);
    expect(checked.size).toBeGreaterThan(40);
  });

  it("suites and evaluations: stored per key, run in the background, reported, followed and cancelled", async () => {
    const suite = { workflow: "no-retry", schema: INVOICE_SCHEMA, cases: [{ name: "one", input: "Invoice INV-1", expect: { "/number": { equals: "INV-1" } } }] };
    expect((await call("PUT", "/api/v1/suites/oa-suite", { body: suite })).status).toBe(201);
    expect((await call("PUT", "/api/v1/suites/oa-suite", { body: suite })).status).toBe(200);
    expect((await call("PUT", "/api/v1/suites/oa-suite", { body: { cases: [] } })).status).toBe(400);
    expect((await call("PUT", "/api/v1/suites/oa-suite", { key: user, body: suite })).status).toBe(409);
    expect((await call("GET", "/api/v1/suites")).status).toBe(200);
    expect((await call("GET", "/api/v1/suites/oa-suite")).status).toBe(200);
    expect((await call("GET", "/api/v1/suites/oa-suite", { key: user })).status).toBe(404);
    ctx.upstream.reply({ content: JSON.stringify({ number: "INV-1", total: 1, currency: "EUR" }) });
    const started = await call("POST", "/api/v1/suites/oa-suite/evaluations", { body: { callback: CALLBACK } });
    expect(started.status).toBe(202);
    expect((await call("POST", "/api/v1/suites/oa-suite/evaluations", { body: { workflowSlug: "nope" } })).status).toBe(404);
    expect((await call("POST", "/api/v1/suites/oa-suite/evaluations", { body: { repeat: 0 } })).status).toBe(400);
    // The same callback address policy as runs: a private address named literally is refused up front.
    const privateCallback = await call("POST", "/api/v1/suites/oa-suite/evaluations", { body: { callback: { url: "http://127.0.0.1:9/hook" }, model: "nope" } });
    expect(privateCallback.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(["/callback/url", "/model"]);
    await waitUntil(async () => (await (await fetch(`${ctx.server.url}/api/v1/evaluations/${started.json.id}`, { headers: { "api-key": ctx.key } })).json()).status === "completed", "the evaluation");
    expect((await call("GET", `/api/v1/evaluations/${started.json.id}`)).json.totals.passed).toBe(1);
    expect((await call("GET", `/api/v1/evaluations/${started.json.id}/events`)).status).toBe(200);
    expect((await call("GET", "/api/v1/evaluations/eval_nope", { key: user })).status).toBe(404);
    expect((await call("GET", "/api/v1/suites/oa-suite/evaluations?limit=5")).status).toBe(200);
    expect((await call("GET", "/api/v1/suites/oa-suite/evaluations?status=nope")).status).toBe(400);
    expect((await call("POST", `/api/v1/evaluations/${started.json.id}/cancel`)).status).toBe(409);
    ctx.upstream.reply({ content: "{}", delayMs: 2_000 });
    const slow = await call("POST", "/api/v1/suites/oa-suite/evaluations", { body: {} });
    expect((await call("POST", `/api/v1/evaluations/${slow.json.id}/cancel`)).status).toBe(200);
    const shared = await call("POST", `/api/v1/evaluations/${started.json.id}/share`, { body: { hideFields: ["/number"] } });
    expect(shared.status).toBe(201);
    expect((await call("GET", `/api/v1/shared/${shared.json.url.split("/s/")[1]}`, { key: null })).status).toBe(200);
    expect((await call("POST", `/api/v1/evaluations/eval_nope/share`, { body: {} })).status).toBe(404);
    expect((await call("DELETE", "/api/v1/suites/oa-suite")).status).toBe(204);
    expect((await call("DELETE", "/api/v1/suites/oa-suite")).status).toBe(404);
  });

  it("workflow versions, labels, diff, promotion; replay and share links", async () => {
    const schema = { type: "object", properties: { n: { type: "string" } }, required: ["n"] };
    expect((await call("PUT", "/api/v1/workflows/oa-life", { body: { model: "free", instructions: "one", retries: 0, schema } })).status).toBe(201);
    expect((await call("PUT", "/api/v1/workflows/oa-life", { body: { model: "free", instructions: "two", retries: 0, schema: { ...schema, required: [] } } })).status).toBe(200);
    expect((await call("PUT", "/api/v1/workflows/oa-life", { body: { model: "free", schema: { type: "object", properties: { a: { type: "nope" } } } } })).status).toBe(400);
    expect((await call("GET", "/api/v1/workflows/oa-life/versions")).status).toBe(200);
    expect((await call("GET", "/api/v1/workflows/nope/versions")).status).toBe(404);
    expect((await call("PUT", "/api/v1/workflows/oa-life/labels/staging", { body: { version: 1 } })).status).toBe(200);
    expect((await call("PUT", "/api/v1/workflows/oa-life/labels/staging", { key: viewer, body: { version: 1 } })).status).toBe(403);
    expect((await call("PUT", "/api/v1/workflows/oa-life/labels/production", { key: user, body: { version: 1 } })).status).toBe(403);
    expect((await call("PUT", "/api/v1/workflows/oa-life/labels/staging", { body: { version: 9 } })).status).toBe(404);
    expect((await call("POST", "/api/v1/workflows/oa-life/labels/production", { body: { version: "2" } })).status).toBe(200);
    expect((await call("POST", "/api/v1/workflows/oa-life/labels/production", { body: { version: "2", requireSuite: "nope" } })).status).toBe(404);
    await call("PUT", "/api/v1/suites/oa-gate", { body: { workflow: "oa-life", cases: [{ name: "one", input: "x", expect: { "/n": { present: true } } }] } });
    ctx.upstream.respondWith(() => ({ content: JSON.stringify({ n: "ok" }) }));
    expect((await call("POST", "/api/v1/workflows/oa-life/labels/production", { body: { version: 1, requireSuite: "oa-gate" } })).status).toBe(202);
    expect((await call("GET", "/api/v1/workflows/oa-life/labels")).status).toBe(200);
    expect((await call("GET", "/api/v1/workflows/oa-life/diff?from=1&to=2")).status).toBe(200);
    expect((await call("GET", "/api/v1/workflows/oa-life/diff?from=1")).status).toBe(400);
    expect((await call("DELETE", "/api/v1/workflows/oa-life/labels/staging")).status).toBe(204);
    expect((await call("DELETE", "/api/v1/workflows/oa-life/labels/staging")).status).toBe(404);

    const run = await call("POST", "/api/v1/generate/object", { key: user, body: { input: "x", type: "event", callback: CALLBACK, workflowSlug: "oa-life@1" } });
    expect(run.status).toBe(200);
    expect((await call("POST", `/api/v1/runs/${run.json.metadata.runId}/replay`, { key: user, body: { workflowSlug: "oa-life@2" } })).status).toBe(201);
    expect((await call("POST", `/api/v1/runs/${run.json.metadata.runId}/replay`, { key: user, body: { workflowSlug: "oa-life@7" } })).status).toBe(404);
    const share = await call("POST", `/api/v1/runs/${run.json.metadata.runId}/share`, { key: user, body: { expiresIn: "1h" } });
    expect(share.status).toBe(201);
    expect((await call("POST", `/api/v1/runs/${run.json.metadata.runId}/share`, { key: user, body: { expiresIn: "1y" } })).status).toBe(400);
    expect((await call("GET", "/api/v1/shares", { key: user })).json.shares).toHaveLength(1);
    expect((await call("GET", `/api/v1/shared/${share.json.url.split("/s/")[1]}`, { key: null })).status).toBe(200);
    expect((await call("DELETE", `/api/v1/shares/${share.json.id}`, { key: user })).status).toBe(204);
    expect((await call("DELETE", "/api/v1/shares/shr_nope", { key: user })).status).toBe(404);
    expect((await call("GET", `/api/v1/shared/${share.json.url.split("/s/")[1]}`, { key: null })).status).toBe(404);
  });

  it("the OpenAI-compatible operations: a completion, a stream, the model list, and errors in OpenAI's shape", async () => {
    const bearer = { key: null, headers: { authorization: `Bearer ${ctx.key}` } };
    const messages = [{ role: "user", content: "Invoice INV-1" }];
    ctx.upstream.reply({ content: JSON.stringify({ number: "INV-1", total: 1, currency: "EUR" }) });
    const completion = await call("POST", "/v1/chat/completions", { ...bearer, body: { model: "no-retry", messages, response_format: { type: "json_schema", json_schema: { name: "invoice", schema: INVOICE_SCHEMA } } } });
    expect(completion.status).toBe(200);
    expect(completion.json.id).toBe(completion.headers.get("x-run-id"));
    const streamed = await call("POST", "/v1/chat/completions", { ...bearer, body: { model: "no-retry", messages, stream: true } });
    expect(streamed.status).toBe(200);
    expect(streamed.text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect((await call("POST", "/v1/chat/completions", { ...bearer, body: { model: "no-retry", messages, n: 2 } })).json.error.param).toBe("n");
    expect((await call("POST", "/v1/chat/completions", { key: null, body: { model: "no-retry", messages } })).status).toBe(401);
    expect((await call("POST", "/v1/chat/completions", { ...bearer, body: { model: "nope", messages } })).status).toBe(404);
    expect((await call("GET", "/v1/models", bearer)).json.data.length).toBeGreaterThan(0);
  });
});
