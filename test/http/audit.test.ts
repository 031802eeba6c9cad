import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { CALLBACK } from "../helpers/config";
import { cli, createKey, get, post } from "../helpers/genserve";
import { waitUntil } from "../helpers/receiver";
import { useGenserve } from "../helpers/suite";

// The audit log over real HTTP: each change to keys, workflows, labels, contexts, suites and shares
// recorded with who made it, from where and what changed — never a secret — and readable only by
// admin keys. And the signing secrets it never shows are sealed in the database.
const ctx = useGenserve();
let user: { id: string; key: string; webhookSecret: string };
beforeAll(async () => void (user = await createKey("auditor-user", { dataDir: ctx.server.dataDir })));

const send = (method: string, route: string, body: unknown, key: string) =>
  fetch(`${ctx.server.url}${route}`, {
    method,
    headers: { "content-type": "application/json", "api-key": key, "user-agent": "audit-test/1.0" },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, json: r.status === 204 ? null : await r.json() }));

const log = async (query = "") => {
  const res = await get(ctx.server, `/api/v1/audit${query}`, ctx.key);
  expect(res.status).toBe(200);
  return res.json as { events: { seq: number; action: string; actor: { kind: string; id: string | null; label: string }; ip: string | null; userAgent: string | null; subject: { kind: string; id: string }; changes: Record<string, { before?: unknown; after?: unknown }> }[]; nextCursor: string | null };
};
const adminId = async () => (await get(ctx.server, "/api/v1/me", ctx.key)).json.keyId as string;

describe("the audit log", () => {
  it("records key changes with the actor, address, client and what changed, and never a secret", async () => {
    const created = await send("POST", "/api/v1/keys", { name: "ci-bot", limits: { rpm: 10 } }, ctx.key);
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    expect((await send("PATCH", `/api/v1/keys/${id}`, { name: "ci-robot", limits: { rpm: 20, budgetDailyUsd: 1.5 } }, ctx.key)).status).toBe(200);
    expect((await send("DELETE", `/api/v1/keys/${id}`, undefined, ctx.key)).status).toBe(204);

    const { events } = await log(`?subject=key:${id}`);
    expect(events.map((e) => e.action)).toEqual(["key.revoke", "key.limits", "key.rename", "key.create"]);
    const me = await adminId();
    for (const e of events) expect(e).toMatchObject({ actor: { kind: "key", id: me, label: "admin" }, ip: "127.0.0.1", userAgent: "audit-test/1.0", subject: { kind: "key", id } });
    expect(events[3]!.changes).toMatchObject({ name: { after: "ci-bot" }, role: { after: "editor" }, project: { after: "prj_default" }, limits: { after: { rpm: 10 } } });
    expect(events[2]!.changes).toEqual({ name: { before: "ci-bot", after: "ci-robot" } });
    expect(events[1]!.changes).toEqual({ rpm: { before: 10, after: 20 }, budgetDailyUsd: { before: null, after: "1.5" } });
    expect(events[0]!.changes.revokedAt).toMatchObject({ before: null, after: expect.any(String) });
    const text = JSON.stringify(events);
    expect(text).not.toContain(created.json.key);
    expect(text).not.toContain(created.json.webhookSecret);
  });

  it("records the first admin key, made by the first start", async () => {
    const [first] = (await log(`?subject=key:${await adminId()}`)).events;
    expect(first).toMatchObject({ action: "key.create", actor: { kind: "system", id: null, label: "first start" }, changes: { name: { after: "admin" }, role: { after: "admin" }, project: { after: "prj_default" } } });
  });

  it("records a signing secret's rotation from the CLI as the system, without the secret", async () => {
    const rotated = JSON.parse(await cli(["keys", "rotate-secret", user.id, "--json"], { dataDir: ctx.server.dataDir, configFile: ctx.server.configFile }));
    const [event] = (await log(`?action=key.secret.rotate&subject=key:${user.id}`)).events;
    expect(event).toMatchObject({ actor: { kind: "system", id: null, label: "genserve CLI" }, ip: null, changes: { webhookSecret: { before: "(redacted)", after: "(redacted)" }, previousSecretSignsUntil: { after: rotated.previousSecretSignsUntil } } });
    expect(JSON.stringify(event)).not.toContain(rotated.webhookSecret);
  });

  it("records workflow versions, label moves (production included), contexts, suites and shares, and keeps them when the subject is deleted", async () => {
    expect((await send("PUT", "/api/v1/contexts/audit-faq", { title: "FAQ", content: "Free shipping." }, ctx.key)).status).toBe(201);
    const body = { description: "Audited", model: "free", instructions: "Be brief.", contexts: [], retries: 0 };
    expect((await send("PUT", "/api/v1/workflows/audited", body, ctx.key)).status).toBe(201);
    expect((await send("PUT", "/api/v1/workflows/audited", { ...body, instructions: "Be very brief." }, ctx.key)).status).toBe(200);
    expect((await send("PUT", "/api/v1/workflows/audited/labels/production", { version: "1" }, ctx.key)).status).toBe(200);
    expect((await send("PUT", "/api/v1/workflows/audited/labels/production", { version: "2" }, ctx.key)).status).toBe(200);
    expect((await send("DELETE", "/api/v1/workflows/audited/labels/production", undefined, ctx.key)).status).toBe(204);

    const workflow = (await log("?subject=workflow:audited")).events;
    expect(workflow.map((e) => e.action)).toEqual(["workflow.label.remove", "workflow.label.move", "workflow.label.move", "workflow.version.create", "workflow.version.create"]);
    expect(workflow[0]!.changes).toEqual({ "labels.production": { before: "2", after: null } });
    expect(workflow[1]!.changes).toEqual({ "labels.production": { before: "1", after: "2" } });
    expect(workflow[3]!.changes).toMatchObject({ version: { before: "1", after: "2" }, instructions: { before: "Be brief.", after: "Be very brief." } });
    expect((await log("?action=context.")).events[0]).toMatchObject({ action: "context.version.create", subject: { kind: "context", id: "audit-faq" }, changes: { content: { after: "Free shipping." } } });

    const suite = { workflow: "no-retry", cases: [{ name: "one", input: "x", expect: { "/a": { equals: 1 } } }] };
    expect((await send("PUT", "/api/v1/suites/audited-suite", suite, user.key)).status).toBe(201);
    expect((await send("DELETE", "/api/v1/suites/audited-suite", undefined, user.key)).status).toBe(204);
    const suiteEvents = (await log("?subject=suite:audited-suite")).events;
    expect(suiteEvents.map((e) => e.action)).toEqual(["suite.delete", "suite.create"]);
    expect(suiteEvents[1]).toMatchObject({ actor: { kind: "key", id: user.id, label: "auditor-user" }, changes: { version: { after: 1 }, workflow: { after: "no-retry" } } });

    ctx.upstream.reply({ content: "Yes." });
    const run = await post(ctx.server, "/api/v1/generate/text", { input: "hi", type: "event", callback: CALLBACK, workflowSlug: "no-retry" }, user.key);
    const share = await send("POST", `/api/v1/runs/${run.json.metadata.runId}/share`, { hideFields: ["/secret"] }, user.key);
    expect(share.status).toBe(201);
    expect((await send("DELETE", `/api/v1/shares/${share.json.id}`, undefined, user.key)).status).toBe(204);
    const shareEvents = (await log(`?subject=share:${share.json.id}`)).events;
    expect(shareEvents.map((e) => e.action)).toEqual(["share.revoke", "share.create"]);
    expect(shareEvents[1]!.changes).toMatchObject({ kind: { after: "run" }, targetId: { after: run.json.metadata.runId }, hideFields: { after: ["/secret"] } });
    // The link's token (in its URL) is never recorded.
    expect(JSON.stringify(shareEvents)).not.toContain(new URL(share.json.url).pathname.split("/").pop());
  });

  it("records who asked for a gated promotion, and genserve's decision when its suite ends", async () => {
    const schema = { type: "object", properties: { n: { type: "string" } }, required: ["n"] };
    await send("PUT", "/api/v1/workflows/audit-gated", { model: "free", instructions: "v", retries: 0, schema }, ctx.key);
    await send("PUT", "/api/v1/suites/audit-gate", { workflow: "audit-gated", cases: [{ name: "a", input: "A", expect: { "/n": { equals: "ok" } } }] }, ctx.key);
    ctx.upstream.respondWith(() => ({ content: JSON.stringify({ n: "ok" }) }));
    const asked = await send("POST", "/api/v1/workflows/audit-gated/labels/production", { version: "1", requireSuite: "audit-gate" }, ctx.key);
    expect(asked.status).toBe(202);
    await waitUntil(async () => (await log("?subject=workflow:audit-gated&action=workflow.label.move")).events.length === 1, "the promotion's decision in the audit log");
    const [decided, requested] = (await log("?subject=workflow:audit-gated&action=workflow.label.")).events;
    expect(requested).toMatchObject({ action: "workflow.label.promote", actor: { kind: "key", label: "admin" }, changes: { "labels.production": { after: "1" }, gate: { after: { suite: "audit-gate", evaluationId: asked.json.evaluationId } } } });
    expect(decided).toMatchObject({ action: "workflow.label.move", actor: { kind: "system", label: "gated promotion" }, ip: null, changes: { "labels.production": { before: null, after: "1" }, gate: { after: { evaluationId: asked.json.evaluationId, passRate: 1 } } } });
  });

  it("records a label moved from the CLI as the system", async () => {
    await send("PUT", "/api/v1/workflows/audit-cli", { model: "free", instructions: "v", retries: 0 }, ctx.key);
    await cli(["workflows", "label", "audit-cli@1", "staging"], { dataDir: ctx.server.dataDir, configFile: ctx.server.configFile });
    const [moved] = (await log("?subject=workflow:audit-cli&action=workflow.label.move")).events;
    expect(moved).toMatchObject({ actor: { kind: "system", id: null, label: "genserve CLI" }, changes: { "labels.staging": { before: null, after: "1" } } });
  });

  it("records people and projects made on the host: users create, password, disable; projects create and rename", async () => {
    const host = { dataDir: ctx.server.dataDir, configFile: ctx.server.configFile };
    await cli(["users", "create", "--email", "audited@example.com", "--role", "viewer", "--public-url", ctx.server.url], host);
    await cli(["users", "disable", "--email", "audited@example.com"], host);
    const person = (await log("?action=member.create")).events.find((e) => e.changes.email?.after === "audited@example.com");
    expect(person).toMatchObject({ actor: { kind: "system", label: "genserve CLI" }, subject: { kind: "person" }, changes: { role: { after: "viewer" } } });
    expect((await log(`?subject=person:${person!.subject.id}`)).events.map((e) => e.action)).toEqual(["member.disable", "member.create"]);
    // A project made on the host is its own project's: the default project's admins see it by its id.
    await cli(["projects", "create", "audited-project", "--name", "Audited"], host);
    await cli(["projects", "rename", "audited-project", "Audited 2"], host);
    const created = await send("POST", "/api/v1/projects", { slug: "audited-api", name: "By the API" }, ctx.key);
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const byApi = (await log("?action=project.")).events;
    expect(byApi[0]).toMatchObject({ action: "project.create", actor: { kind: "key", label: "admin" }, changes: { slug: { after: "audited-api" } } });
  });

  it("filters by actor, action prefix and time, and pages newest first with a cursor", async () => {
    const me = await adminId();
    const mine = (await log(`?actor=${me}&limit=200`)).events;
    expect(mine.length).toBeGreaterThan(3);
    expect(mine.every((e) => e.actor.id === me)).toBe(true);
    expect((await log("?action=workflow.label.")).events.every((e) => e.action.startsWith("workflow.label."))).toBe(true);
    expect((await log(`?to=2000-01-01T00:00:00Z`)).events).toEqual([]);
    const first = await log("?limit=2");
    expect(first.events).toHaveLength(2);
    const second = await log(`?limit=2&cursor=${first.nextCursor}`);
    expect(second.events[0]!.seq).toBeLessThan(first.events[1]!.seq);
    expect((await get(ctx.server, "/api/v1/audit?cursor=nonsense", ctx.key)).status).toBe(400);
  });

  it("answers 403 to keys that are not admin keys, and 401 without a key", async () => {
    const res = await get(ctx.server, "/api/v1/audit", user.key);
    expect(res.status).toBe(403);
    expect(res.json).toMatchObject({ code: "forbidden" });
    expect((await get(ctx.server, "/api/v1/audit", null)).status).toBe(401);
  });
});

describe("signing secrets at rest", () => {
  it("keeps none in plain text in the database, and the key file outside it (0600)", async () => {
    const db = new Database(path.join(ctx.server.dataDir, "genserve.sqlite"), { readonly: true });
    try {
      const rows = db.prepare("SELECT webhook_secret, previous_webhook_secret FROM api_keys").all() as { webhook_secret: string | null; previous_webhook_secret: string | null }[];
      expect(rows.length).toBeGreaterThan(1);
      for (const row of rows) {
        expect(row.webhook_secret).toMatch(/^enc:v1:[0-9a-f]{8}:/);
        if (row.previous_webhook_secret !== null) expect(row.previous_webhook_secret).toMatch(/^enc:v1:/);
      }
      expect(JSON.stringify(rows)).not.toContain(user.webhookSecret);
      // Nor anywhere in the files (the write-ahead log included).
      for (const file of ["genserve.sqlite", "genserve.sqlite-wal"].map((f) => path.join(ctx.server.dataDir, f)).filter((f) => existsSync(f))) {
        expect(readFileSync(file).includes(Buffer.from(user.webhookSecret))).toBe(false);
      }
    } finally {
      db.close();
    }
    expect(statSync(path.join(ctx.server.dataDir, "secrets.key")).mode & 0o777).toBe(0o600);
  });

  it("refuses to open the data with another key, saying what is wrong", async () => {
    const dir = path.dirname(ctx.server.configFile!);
    const wrong = path.join(dir, "wrong.key");
    writeFileSync(wrong, `${Buffer.alloc(32, 9).toString("base64")}\n`);
    const config = path.join(dir, "wrong.yaml");
    writeFileSync(config, `${readFileSync(ctx.server.configFile!, "utf8")}\nsecurity:\n  secretsKey:\n    file: ${wrong}\n`);
    await expect(cli(["keys", "list"], { dataDir: ctx.server.dataDir, configFile: config })).rejects.toThrow(/secrets key/);
  });
});
