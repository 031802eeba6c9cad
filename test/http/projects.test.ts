import { beforeAll, describe, expect, it } from "vitest";
import { CALLBACK, INVOICE_SCHEMA } from "../helpers/config";
import { createKey, readReply } from "../helpers/genserve";
import { waitUntil } from "../helpers/receiver";
import { useGenserve } from "../helpers/suite";

// Projects isolate: a key sees its own project and nothing of another — each resource of project A
// (a run, its stream, a thread, a suite, an evaluation, a workflow version and label, a context, a
// share link, an inbox, usage) is a 404 to project B's keys (an admin's included), never its
// content, and B's lists never hold it. Catalog entries are named per project: B's "flow" is not A's.

const ctx = useGenserve();
let a: { id: string; key: string };
let aViewer: { id: string; key: string };
let b: { id: string; key: string };
let bViewer: { id: string; key: string };
const made = {} as { run: string; stream: string; thread: string; evaluation: string; share: string; inbox: string };

const call = async (method: string, path: string, key: string, body?: unknown) => {
  const response = await fetch(`${ctx.server.url}${path}`, {
    method,
    headers: { "api-key": key, ...(body !== undefined && { "content-type": "application/json" }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return readReply(response);
};

beforeAll(async () => {
  // Project A is the default project (its editor makes things); project B is made through the API.
  a = await createKey("project-a", { dataDir: ctx.server.dataDir, role: "editor" });
  aViewer = await createKey("project-a-viewer", { dataDir: ctx.server.dataDir, role: "viewer" });
  expect((await call("POST", "/api/v1/projects", ctx.key, { slug: "beta", name: "Beta" })).status).toBe(201);
  b = await createKey("project-b", { dataDir: ctx.server.dataDir, role: "admin", project: "beta" });
  bViewer = (await call("POST", "/api/v1/keys", b.key, { name: "project-b-viewer", role: "viewer" })).json;

  expect((await call("PUT", "/api/v1/contexts/a-terms", a.key, { content: "SECRET TERMS OF A" })).status).toBe(201);
  expect((await call("PUT", "/api/v1/workflows/flow", a.key, { model: "fast", instructions: "SECRET INSTRUCTIONS OF A", contexts: ["a-terms"] })).status).toBe(201);
  expect((await call("PUT", "/api/v1/workflows/flow/labels/staging", a.key, { version: 1 })).status).toBe(200);
  const run = await call("POST", "/api/v1/generate/object", a.key, { input: "Invoice SECRET-A-1", type: "event", callback: CALLBACK, workflowSlug: "extract-invoice", schema: INVOICE_SCHEMA });
  expect(run.status).toBe(200);
  made.run = run.json.metadata.runId;
  const stream = await fetch(`${ctx.server.url}/api/v1/stream/object`, { method: "POST", headers: { "api-key": a.key, "content-type": "application/json" }, body: JSON.stringify({ input: "Invoice SECRET-A-2", workflowSlug: "extract-invoice", schema: INVOICE_SCHEMA }) });
  const streamed = await stream.text();
  made.stream = stream.headers.get("x-run-id") ?? /run_[0-9A-Z]{26}/.exec(streamed)![0];
  const thread = await call("POST", "/api/v1/threads", a.key, { workflowSlug: "extract-invoice" });
  expect(thread.status).toBe(201);
  made.thread = thread.json.id;
  const suite = await call("PUT", "/api/v1/suites/a-suite", a.key, { workflow: "no-retry", schema: INVOICE_SCHEMA, cases: [{ name: "one", input: "Invoice SECRET-A-3" }] });
  expect(suite.status).toBe(201);
  const evaluation = await call("POST", "/api/v1/suites/a-suite/evaluations", a.key, {});
  expect(evaluation.status).toBe(202);
  made.evaluation = evaluation.json.id;
  const share = await call("POST", `/api/v1/runs/${made.run}/share`, a.key, {});
  expect(share.status).toBe(201);
  made.share = share.json.id;
  const inbox = await call("POST", "/api/v1/inbox", a.key, {});
  expect(inbox.status).toBe(201);
  made.inbox = inbox.json.id;
});

describe("project isolation", () => {
  const others = () => [b.key, bViewer.key];

  it("answers another project's run, its stream and its share link as not found", async () => {
    for (const key of others()) {
      expect((await call("GET", `/api/v1/runs/${made.run}`, key)).status).toBe(404);
      expect((await call("GET", `/api/v1/runs/${made.stream}/stream`, key)).status).toBe(404);
      expect((await call("POST", `/api/v1/runs/${made.run}/share`, b.key, {})).status).toBe(404);
      expect((await call("POST", `/api/v1/runs/${made.run}/cancel`, b.key, {})).status).toBe(404);
      expect((await call("POST", `/api/v1/runs/${made.run}/replay`, b.key, {})).status).toBe(404);
      expect((await call("DELETE", `/api/v1/shares/${made.share}`, b.key)).status).toBe(404);
      const runs = await call("GET", "/api/v1/runs", key);
      expect(runs.status).toBe(200);
      expect(runs.text).not.toContain("SECRET-A");
      expect((await call("GET", "/api/v1/shares", key)).json.shares).toEqual([]);
    }
    // The project's own viewer reads them.
    expect((await call("GET", `/api/v1/runs/${made.run}`, aViewer.key)).json.input).toContain("SECRET-A-1");
    expect((await call("GET", "/api/v1/shares", aViewer.key)).json.shares.map((s: { id: string }) => s.id)).toContain(made.share);
  });

  it("answers another project's thread, inbox, suite and evaluation as not found", async () => {
    for (const key of others()) {
      expect((await call("GET", `/api/v1/threads/${made.thread}`, key)).status).toBe(404);
      expect((await call("GET", `/api/v1/inbox/${made.inbox}`, key)).status).toBe(404);
      expect((await call("GET", "/api/v1/suites/a-suite", key)).status).toBe(404);
      expect((await call("GET", "/api/v1/suites/a-suite/evaluations", key)).json.evaluations).toEqual([]);
      expect((await call("GET", `/api/v1/evaluations/${made.evaluation}`, key)).status).toBe(404);
      expect((await call("GET", `/api/v1/evaluations/${made.evaluation}/events`, key)).status).toBe(404);
      expect((await call("GET", "/api/v1/suites", key)).json.suites).toEqual([]);
    }
    expect((await call("POST", `/api/v1/evaluations/${made.evaluation}/cancel`, b.key, {})).status).toBe(404);
    expect((await call("POST", `/api/v1/evaluations/${made.evaluation}/share`, b.key, {})).status).toBe(404);
    expect((await call("DELETE", "/api/v1/suites/a-suite", b.key)).status).toBe(404);
    expect((await call("GET", "/api/v1/suites/a-suite", aViewer.key)).status).toBe(200);
    await waitUntil(async () => ["completed", "failed"].includes((await call("GET", `/api/v1/evaluations/${made.evaluation}`, a.key)).json.status), "the evaluation to end");
  });

  it("keeps workflows, their versions and labels, and contexts per project: another's are not found, and the same slug is a workflow of its own", async () => {
    for (const key of others()) {
      for (const path of ["/api/v1/workflows/flow", "/api/v1/workflows/flow@staging", "/api/v1/workflows/flow/versions", "/api/v1/workflows/flow/labels", "/api/v1/workflows/flow/diff?from=1&to=1", "/api/v1/contexts/a-terms"]) {
        const answer = await call("GET", path, key);
        expect(answer.status, path).toBe(404);
        expect(answer.text).not.toContain("SECRET");
      }
      const lists = [await call("GET", "/api/v1/workflows", key), await call("GET", "/api/v1/contexts", key)];
      for (const list of lists) expect(list.text).not.toMatch(/"flow"|a-terms|extract-invoice/);
    }
    // genserve.yaml's workflows are the default project's: B cannot run them.
    expect((await call("POST", "/api/v1/generate/object", b.key, { input: "x", type: "event", callback: CALLBACK, workflowSlug: "extract-invoice", schema: INVOICE_SCHEMA })).status).toBe(404);
    // B's own "flow" is numbered from 1 and labelled on its own; A's is untouched.
    expect((await call("PUT", "/api/v1/workflows/flow", b.key, { model: "fast", instructions: "B's own" })).json).toMatchObject({ version: "1", instructions: "B's own" });
    expect((await call("PUT", "/api/v1/workflows/flow/labels/production", b.key, { version: 1 })).status).toBe(200);
    expect((await call("GET", "/api/v1/workflows/flow", a.key)).json).toMatchObject({ version: "1", instructions: "SECRET INSTRUCTIONS OF A" });
    expect((await call("GET", "/api/v1/workflows/flow/labels", a.key)).json.labels.map((l: { label: string }) => l.label)).toEqual(["staging"]);
    expect((await call("DELETE", "/api/v1/contexts/a-terms", b.key)).status).toBe(404);
  });

  it("reports usage and keys of the caller's project only", async () => {
    const usage = await call("GET", "/api/v1/usage?groupBy=key", b.key);
    expect(usage.status).toBe(200);
    expect(usage.text).not.toContain(a.id);
    expect((await call("GET", `/api/v1/usage?groupBy=key&keyId=${a.id}`, b.key)).json.groups).toEqual([]);
    expect((await call("GET", "/api/v1/usage?groupBy=key", aViewer.key)).text).toContain(a.id);
    const keys = await call("GET", "/api/v1/keys", b.key);
    expect(keys.json.keys.map((k: { id: string }) => k.id).sort()).toEqual([b.id, bViewer.id].sort());
    expect((await call("GET", `/api/v1/keys/${a.id}`, b.key)).status).toBe(404);
    expect((await call("DELETE", `/api/v1/keys/${a.id}`, b.key)).status).toBe(404);
    // B's admin sees and renames its own project only, and makes no keys elsewhere.
    expect((await call("GET", "/api/v1/projects", b.key)).json.projects.map((p: { slug: string }) => p.slug)).toEqual(["beta"]);
    expect((await call("PATCH", "/api/v1/projects/default", b.key, { name: "taken over" })).status).toBe(404);
    expect((await call("POST", "/api/v1/keys", b.key, { name: "sneaky", project: "default" })).status).toBe(404);
    expect((await call("POST", "/api/v1/projects", b.key, { slug: "gamma" })).status).toBe(403);
  });
});
