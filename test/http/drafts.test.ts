import { beforeAll, describe, expect, it } from "vitest";
import { CALLBACK, INVOICE_SCHEMA } from "../helpers/config";
import type { ReceivedRequest } from "../helpers/fake-upstream";
import { createKey, get, post } from "../helpers/genserve";
import { useGenserve } from "../helpers/suite";

// Drafts over real HTTP against the fake upstream: a workflow version run with unsaved edits
// (instructions, model, limits, contexts) reaches the model as edited, is stored as a draft run
// with the definition that ran and what differs, replays with that definition, is refused (403)
// to keys that may not edit workflows, and leaves versions and labels as they were.

const ctx = useGenserve("network:\n  allowPrivate: true\n");
let user: { id: string; key: string };
let viewer: { id: string; key: string };

beforeAll(async () => {
  user = await createKey("drafts-user", { dataDir: ctx.server.dataDir });
  viewer = await createKey("drafts-viewer", { dataDir: ctx.server.dataDir, role: "viewer" });
});

const call = async (method: string, path: string, body?: unknown, key = ctx.key) => {
  const response = await fetch(`${ctx.server.url}${path}`, {
    method,
    headers: { "api-key": key, ...(body !== undefined && { "content-type": "application/json" }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined };
};
const systemOf = (request: ReceivedRequest) => String(request.body.messages.find((m) => m.role === "system")?.content ?? "");

describe("draft runs", () => {
  it("run the edited definition, record it with its base and differences, and change no version or label", async () => {
    expect((await call("PUT", "/api/v1/contexts/draft-notes", { content: "DRAFT CONTEXT" })).status).toBe(201);
    expect((await call("PUT", "/api/v1/workflows/drafted", { model: "fast", instructions: "SAVED ONE", temperature: 0.5, schema: INVOICE_SCHEMA })).status).toBe(201);
    expect((await call("PUT", "/api/v1/workflows/drafted/labels/staging", { version: 1 })).status).toBe(200);
    const versionsBefore = (await call("GET", "/api/v1/workflows/drafted/versions")).json;

    const draft = { instructions: "EDITED IN THE PLAYGROUND", model: "free", temperature: 1.2, maxOutputTokens: 321, contexts: ["draft-notes"] };
    ctx.upstream.reply({ content: JSON.stringify({ number: "INV-9", total: 9, currency: "EUR" }) });
    const run = await post(ctx.server, "/api/v1/generate/object", { input: "Invoice INV-9", type: "event", callback: CALLBACK, workflowSlug: "drafted@1", draft }, ctx.key);
    expect(run.status).toBe(200);
    const sent = ctx.upstream.requests.at(-1)!;
    expect(systemOf(sent)).toContain("EDITED IN THE PLAYGROUND");
    expect(systemOf(sent)).not.toContain("SAVED ONE");
    expect(systemOf(sent)).toContain("DRAFT CONTEXT");
    expect(sent.body).toMatchObject({ model: "fake-free", temperature: 1.2, max_tokens: 321 });

    const stored = (await get(ctx.server, `/api/v1/runs/${run.json.metadata.runId}`, ctx.key)).json;
    expect(stored).toMatchObject({ workflowSlug: "drafted", workflowVersion: "1", draft: { base: "1", definition: { ...draft, retries: 2 } } });
    expect(stored.draft.changes.map((c: { name: string }) => c.name).sort()).toEqual(["contexts", "instructions", "maxOutputTokens", "model", "temperature"]);
    expect(stored.draft.instructionsDiff).toEqual(["-SAVED ONE", "+EDITED IN THE PLAYGROUND"]);
    const listed = (await get(ctx.server, "/api/v1/runs?workflowSlug=drafted", ctx.key)).json.runs;
    expect(listed[0]).toMatchObject({ id: run.json.metadata.runId, draft: { base: "1" } });

    // Its share link shows it is a draft run: the definition that ran and its diff against the base version.
    const link = (await call("POST", `/api/v1/runs/${run.json.metadata.runId}/share`, {})).json.url as string;
    const shared = await (await fetch(`${ctx.server.url}/api/v1/shared/${link.split("/s/")[1]}`)).json();
    expect(shared.run).toMatchObject({ workflowVersion: "1", draft: { base: "1", definition: { ...draft, retries: 2 }, instructionsDiff: ["-SAVED ONE", "+EDITED IN THE PLAYGROUND"] } });

    // A draft with long instructions is previewed in lists like every large field: left out, named
    // in `truncated`; the run itself has it whole.
    const long = "Follow these rules. ".repeat(5_000);
    ctx.upstream.reply({ content: JSON.stringify({ number: "INV-2", total: 2, currency: "EUR" }) });
    const longRun = await post(ctx.server, "/api/v1/generate/object", { input: "Invoice INV-2", type: "event", callback: CALLBACK, workflowSlug: "drafted@1", draft: { instructions: long } }, ctx.key);
    expect(longRun.status).toBe(200);
    const page = await fetch(`${ctx.server.url}/api/v1/runs?workflowSlug=drafted&limit=1`, { headers: { "api-key": ctx.key } });
    const pageText = await page.text();
    expect(JSON.parse(pageText).runs[0]).toMatchObject({ id: longRun.json.metadata.runId, draft: null, truncated: ["draft"] });
    expect(pageText.length).toBeLessThan(20_000);
    expect((await get(ctx.server, `/api/v1/runs/${longRun.json.metadata.runId}`, ctx.key)).json.draft.definition.instructions).toBe(long);

    // Nothing of the draft was saved: the versions, the plain slug, slug@1 and the label run as before.
    expect((await call("GET", "/api/v1/workflows/drafted/versions")).json).toEqual(versionsBefore);
    for (const ref of ["drafted", "drafted@1", "drafted@staging"]) {
      ctx.upstream.reply({ content: JSON.stringify({ number: "INV-1", total: 1, currency: "EUR" }) });
      const plain = await post(ctx.server, "/api/v1/generate/object", { input: "Invoice INV-1", type: "event", callback: CALLBACK, workflowSlug: ref }, ctx.key);
      expect(plain.status).toBe(200);
      expect(systemOf(ctx.upstream.requests.at(-1)!)).toContain("SAVED ONE");
      expect(ctx.upstream.requests.at(-1)!.body).toMatchObject({ model: "fake-7b", temperature: 0.5 });
      expect((await get(ctx.server, `/api/v1/runs/${plain.json.metadata.runId}`, ctx.key)).json.draft).toBeNull();
      if (ref === "drafted") {
        // The share link of a run of a saved version says it is not a draft.
        const plainLink = (await call("POST", `/api/v1/runs/${plain.json.metadata.runId}/share`, {})).json.url as string;
        expect((await (await fetch(`${ctx.server.url}/api/v1/shared/${plainLink.split("/s/")[1]}`)).json()).run.draft).toBeNull();
      }
    }

    // A replay runs the definition that ran; on another version it runs that version as saved, and says so.
    ctx.upstream.reply({ content: JSON.stringify({ number: "INV-9", total: 9, currency: "EUR" }) });
    const replay = await call("POST", `/api/v1/runs/${run.json.metadata.runId}/replay`, {});
    expect(replay.status).toBe(201);
    expect(replay.json).toMatchObject({ workflowSlug: "drafted@1", identical: true });
    expect(systemOf(ctx.upstream.requests.at(-1)!)).toContain("EDITED IN THE PLAYGROUND");
    expect(ctx.upstream.requests.at(-1)!.body).toMatchObject({ model: "fake-free", temperature: 1.2, max_tokens: 321 });
    expect((await get(ctx.server, `/api/v1/runs/${replay.json.runId}`, ctx.key)).json).toMatchObject({ draft: { base: "1", definition: draft } });
    ctx.upstream.reply({ content: JSON.stringify({ number: "INV-9", total: 9, currency: "EUR" }) });
    const asSaved = await call("POST", `/api/v1/runs/${run.json.metadata.runId}/replay`, { workflowSlug: "drafted@staging" });
    expect(asSaved.status).toBe(201);
    expect(systemOf(ctx.upstream.requests.at(-1)!)).toContain("SAVED ONE");
    expect(asSaved.json.notes.join(" ")).toContain("without the draft's edits");
  });

  it("streams a draft too, and a text run of a draft", async () => {
    await call("PUT", "/api/v1/workflows/drafted-stream", { model: "fast", instructions: "STREAM SAVED" });
    ctx.upstream.reply({ content: JSON.stringify({ number: "S-1", total: 1, currency: "EUR" }) });
    const stream = await fetch(`${ctx.server.url}/api/v1/stream/object`, {
      method: "POST",
      headers: { "content-type": "application/json", "api-key": ctx.key },
      body: JSON.stringify({ input: "hi", workflowSlug: "drafted-stream", schema: INVOICE_SCHEMA, draft: { instructions: "STREAM DRAFT" } }),
    });
    expect(stream.status).toBe(200);
    const runId = stream.headers.get("x-run-id")!;
    await stream.text();
    expect(systemOf(ctx.upstream.requests.at(-1)!)).toContain("STREAM DRAFT");
    expect((await get(ctx.server, `/api/v1/runs/${runId}`, ctx.key)).json.draft).toMatchObject({ base: "1", changes: [{ name: "instructions", from: "STREAM SAVED", to: "STREAM DRAFT" }] });
    ctx.upstream.reply({ content: "plain words" });
    const text = await post(ctx.server, "/api/v1/generate/text", { input: "hi", type: "event", callback: CALLBACK, workflowSlug: "drafted-stream", draft: { instructions: "TEXT DRAFT" } }, ctx.key);
    expect(text.status).toBe(200);
    expect(systemOf(ctx.upstream.requests.at(-1)!)).toContain("TEXT DRAFT");
  });

  it("are refused (403) to keys that may not edit the workflow (viewers, who run nothing), and bad drafts name the field", async () => {
    await call("PUT", "/api/v1/workflows/drafted-refused", { model: "fast", instructions: "KEPT" });
    const before = ctx.upstream.requests.length;
    const refused = await post(ctx.server, "/api/v1/generate/object", { input: "x", type: "event", callback: CALLBACK, workflowSlug: "drafted-refused", schema: INVOICE_SCHEMA, draft: { instructions: "SNEAKY" } }, viewer.key);
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ code: "forbidden" });
    expect(refused.json.detail).toContain("editor");
    const stream = await fetch(`${ctx.server.url}/api/v1/stream/object`, {
      method: "POST",
      headers: { "content-type": "application/json", "api-key": viewer.key },
      body: JSON.stringify({ input: "hi", workflowSlug: "drafted-refused", schema: INVOICE_SCHEMA, draft: { instructions: "SNEAKY" } }),
    });
    expect(stream.status).toBe(403);
    expect(ctx.upstream.requests.length).toBe(before);
    // No run was stored for the refused requests.
    expect((await get(ctx.server, "/api/v1/runs?workflowSlug=drafted-refused", viewer.key)).json.runs).toEqual([]);
    // An editor key runs the saved version (and may run drafts).
    ctx.upstream.reply({ content: JSON.stringify({ number: "K", total: 1, currency: "EUR" }) });
    expect((await post(ctx.server, "/api/v1/generate/object", { input: "x", type: "event", callback: CALLBACK, workflowSlug: "drafted-refused", schema: INVOICE_SCHEMA }, user.key)).status).toBe(200);

    const badModel = await post(ctx.server, "/api/v1/generate/object", { input: "x", type: "event", callback: CALLBACK, workflowSlug: "drafted-refused", schema: INVOICE_SCHEMA, draft: { model: "nope", contexts: ["missing"] } }, ctx.key);
    expect(badModel.status).toBe(400);
    expect(badModel.json.errors).toEqual([
      { path: "/draft/model", message: expect.stringContaining('unknown model "nope"') },
      { path: "/draft/contexts/0", message: 'unknown context "missing"' },
    ]);
    const badShape = await post(ctx.server, "/api/v1/generate/object", { input: "x", type: "event", callback: CALLBACK, workflowSlug: "drafted-refused", schema: INVOICE_SCHEMA, draft: { temperature: 5, extra: 1 } }, ctx.key);
    expect(badShape.status).toBe(400);
    expect(badShape.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(["/draft/extra", "/draft/temperature"]);
  });
});

describe("saving a draft as a version", () => {
  it("keeps the version's note with that version only", async () => {
    await call("PUT", "/api/v1/workflows/noted", { model: "fast", instructions: "ONE" });
    const saved = await call("PUT", "/api/v1/workflows/noted", { model: "fast", instructions: "TWO", note: "Tighter instructions" });
    expect(saved.json).toMatchObject({ version: "2", note: "Tighter instructions" });
    const versions = (await call("GET", "/api/v1/workflows/noted/versions")).json.versions;
    expect(versions.map((v: { note: string | null }) => v.note)).toEqual([null, "Tighter instructions"]);
    expect((await call("GET", "/api/v1/workflows/noted@1")).json.note).toBeUndefined();
  });
});
