import { beforeAll, describe, expect, it } from "vitest";
import { CALLBACK } from "../helpers/config";
import { createKey, get, post } from "../helpers/genserve";
import { useGenserve } from "../helpers/suite";

const ctx = useGenserve();
let user: { key: string };
// A viewer key: it reads workflows and contexts, and changes none (editor and admin keys do).
beforeAll(async () => void (user = await createKey("user", { dataDir: ctx.server.dataDir, role: "viewer" })));

const send = (method: string, path: string, body: unknown, key: string) =>
  fetch(`${ctx.server.url}${path}`, { method, headers: { "content-type": "application/json", "api-key": key }, body: body === undefined ? undefined : JSON.stringify(body) }).then(
    async (r) => ({ status: r.status, json: r.status === 204 ? null : await r.json() }),
  );

describe("managed workflows and contexts", () => {
  it("lets editor and admin keys create versioned contexts and workflows; viewer keys may only read", async () => {
    expect((await send("PUT", "/api/v1/contexts/faq", { title: "FAQ", content: "Shipping is free." }, user.key)).status).toBe(403);
    const created = await send("PUT", "/api/v1/contexts/faq", { title: "FAQ", content: "Shipping is free." }, ctx.key);
    expect(created).toMatchObject({ status: 201, json: { slug: "faq", version: "1", source: "api", content: "Shipping is free." } });
    const changed = await send("PUT", "/api/v1/contexts/faq", { title: "FAQ", content: "Shipping is free over 50 EUR." }, ctx.key);
    expect(changed).toMatchObject({ status: 200, json: { version: "2" } });
    expect((await get(ctx.server, "/api/v1/contexts/faq", user.key)).json.content).toBe("Shipping is free over 50 EUR.");
    expect((await get(ctx.server, "/api/v1/contexts", user.key)).json.contexts).toContainEqual({ slug: "faq", title: "FAQ", size: 29, version: "2", source: "api" });

    const badModel = await send("PUT", "/api/v1/workflows/helpdesk", { model: "nope", contexts: ["missing"] }, ctx.key);
    expect(badModel.status).toBe(400);
    expect(badModel.json.errors).toEqual([
      { path: "/model", message: 'unknown model alias "nope"' },
      { path: "/contexts/0", message: 'unknown context "missing"' },
    ]);
    const workflow = await send("PUT", "/api/v1/workflows/helpdesk", { description: "Answers customers", model: "free", instructions: "Be kind.", contexts: ["faq"], retries: 0 }, ctx.key);
    expect(workflow).toMatchObject({ status: 201, json: { slug: "helpdesk", version: "1", model: "free", contexts: ["faq"] } });
    expect((await get(ctx.server, "/api/v1/workflows", user.key)).json.workflows).toContainEqual(expect.objectContaining({ slug: "helpdesk", version: "1", source: "api" }));
  });

  it("keeps the configuration file's entries read-only", async () => {
    expect((await send("PUT", "/api/v1/contexts/invoice-rules", { content: "x" }, ctx.key)).json.code).toBe("conflict");
    expect((await send("DELETE", "/api/v1/workflows/extract-invoice", undefined, ctx.key)).status).toBe(409);
  });

  it("records on each run the versions it used and hashes of its prompt and schema", async () => {
    ctx.upstream.reply({ content: "Yes." }, { content: "Yes." });
    const run = async () => {
      const res = await post(ctx.server, "/api/v1/generate/text", { input: "Is shipping free?", type: "event", callback: CALLBACK, workflowSlug: "helpdesk" }, ctx.key);
      expect(res.status).toBe(200);
      return (await get(ctx.server, `/api/v1/runs/${res.json.metadata.runId}`, ctx.key)).json;
    };
    const first = await run();
    expect(first).toMatchObject({ workflowVersion: "1", contextVersions: { faq: "2" }, promptHash: expect.stringMatching(/^[0-9a-f]{64}$/), schemaHash: null });
    expect(ctx.upstream.requests[0]!.body.messages[0]!.content).toContain("Shipping is free over 50 EUR.");
    // A context change does not change what workflow version 1 means (its contexts are pinned);
    // saving the workflow again makes version 2, on the new context.
    await send("PUT", "/api/v1/contexts/faq", { title: "FAQ", content: "Shipping costs 5 EUR." }, ctx.key);
    const same = await run();
    expect(same).toMatchObject({ workflowVersion: "1", contextVersions: { faq: "2" }, promptHash: first.promptHash });
    await send("PUT", "/api/v1/workflows/helpdesk", { description: "Answers customers", model: "free", instructions: "Be kind.", contexts: ["faq"], retries: 0 }, ctx.key);
    ctx.upstream.reply({ content: "Yes." });
    const second = await run();
    expect(second).toMatchObject({ workflowVersion: "2", contextVersions: { faq: "3" } });
    expect(second.promptHash).not.toBe(first.promptHash);

    ctx.upstream.reply({ content: '{"a": "x"}' });
    const object = await post(ctx.server, "/api/v1/generate/object", { input: "x", type: "event", callback: CALLBACK, workflowSlug: "no-retry", schema: { type: "object" } }, ctx.key);
    const stored = (await get(ctx.server, `/api/v1/runs/${object.json.metadata.runId}`, ctx.key)).json;
    expect(stored).toMatchObject({ workflowVersion: "config", schemaHash: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it("deletes API-managed entries: runs on them then fail with 404", async () => {
    expect((await send("DELETE", "/api/v1/workflows/helpdesk", undefined, user.key)).status).toBe(403);
    expect((await send("DELETE", "/api/v1/workflows/helpdesk", undefined, ctx.key)).status).toBe(204);
    expect((await send("DELETE", "/api/v1/workflows/helpdesk", undefined, ctx.key)).status).toBe(404);
    const res = await post(ctx.server, "/api/v1/generate/text", { input: "x", type: "event", callback: CALLBACK, workflowSlug: "helpdesk" }, ctx.key);
    expect(res.status).toBe(404);
    expect(res.json.code).toBe("workflow_not_found");
    // Re-creating it starts a new version, not version 1 again.
    const again = await send("PUT", "/api/v1/workflows/helpdesk", { model: "free" }, ctx.key);
    expect(again).toMatchObject({ status: 201, json: { version: "4" } });
  });
});
