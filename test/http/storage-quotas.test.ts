import { describe, expect, it } from "vitest";
import { INVOICE_SCHEMA } from "../helpers/config";
import { get, post } from "../helpers/genserve";
import { streamRequest } from "../helpers/streams";
import { useGenserve } from "../helpers/suite";

// What one key may hold, and what an inbox's URL lets anyone store (issue 31): caps per key on
// inboxes, share links, threads and suites; inbox deliveries bounded in size, count and bytes, and
// read a page at a time; share links that stop working with their key.
const ctx = useGenserve(`
network:
  allowPrivate: true
limits:
  inboxesPerKey: 2
  sharesPerKey: 2
  threadsPerKey: 2
  suitesPerKey: 1
  inboxEventBytes: 4096
  inboxKeep: 4
  inboxBytes: 12000
  inboxPageBytes: 4096
`);

const send = async (method: string, path: string, key: string | null, body?: unknown) => {
  const response = await fetch(`${ctx.server.url}${path}`, {
    method,
    headers: { ...(key ? { "api-key": key } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: text ? JSON.parse(text) : undefined };
};
const newKey = async (name: string) => (await post(ctx.server, "/api/v1/keys", { name }, ctx.key)).json as { id: string; key: string };
const refused = (resource: string, limit: number) => ({ code: "quota_exceeded", status: 409, quota: { resource, limit, used: limit } });
const callback = () => ({ url: `${ctx.server.url}/api/v1/inbox/inb_nowhere` });

describe("per-key storage quotas", () => {
  it("refuse a key's next inbox, share link, thread or suite past its cap with 409 quota_exceeded naming it, and leave other keys alone", async () => {
    const { key } = await newKey("holder");
    const other = await newKey("neighbour");

    for (let i = 0; i < 2; i++) expect((await post(ctx.server, "/api/v1/inbox", {}, key)).status).toBe(201);
    const inbox = await post(ctx.server, "/api/v1/inbox", {}, key);
    expect(inbox.status).toBe(409);
    expect(inbox.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(inbox.headers.get("retry-after")).toBeNull();
    expect(inbox.json).toMatchObject({ ...refused("inboxes", 2), detail: expect.stringMatching(/inboxesPerKey/) });
    expect((await post(ctx.server, "/api/v1/inbox", {}, other.key)).status).toBe(201);

    const run = await post(ctx.server, "/api/v1/generate/text", { input: "share me", type: "event", workflowSlug: "no-retry", callback: callback() }, key);
    expect(run.status).toBe(200);
    const share = () => send("POST", `/api/v1/runs/${run.json.metadata.runId}/share`, key, {});
    const first = await share();
    expect(first.status).toBe(201);
    expect((await share()).status).toBe(201);
    expect((await share()).json).toMatchObject(refused("shares", 2));
    expect((await send("DELETE", `/api/v1/shares/${first.json.id}`, key)).status).toBe(204);
    expect((await share()).status).toBe(201); // a revoked link frees its place

    for (const id of ["t-1", "t-2"]) expect((await send("POST", "/api/v1/threads", key, { id, workflowSlug: "extract-invoice" })).status).toBe(201);
    expect((await send("POST", "/api/v1/threads", key, { id: "t-3", workflowSlug: "extract-invoice" })).json).toMatchObject(refused("threads", 2));
    expect((await send("POST", "/api/v1/threads", key, { id: "t-1", workflowSlug: "extract-invoice" })).json).toMatchObject({ code: "conflict" });
    // A run that would start a third thread is refused before anything is stored.
    const before = (await get(ctx.server, "/api/v1/runs?limit=100", key)).json.runs.length;
    const streamed = await streamRequest(ctx.server.url, key, { input: "x", schema: INVOICE_SCHEMA, workflowSlug: "extract-invoice", threadId: "t-new" });
    expect(streamed.status).toBe(409);
    expect(await streamed.json()).toMatchObject(refused("threads", 2));
    expect((await get(ctx.server, "/api/v1/runs?limit=100", key)).json.runs).toHaveLength(before);
    expect((await send("DELETE", "/api/v1/threads/t-2", key)).status).toBe(204);
    const continued = await streamRequest(ctx.server.url, key, { input: "x", schema: INVOICE_SCHEMA, workflowSlug: "extract-invoice", threadId: "t-new" });
    expect(continued.status).toBe(200);
    await continued.text();

    const suite = { workflow: "no-retry", cases: [{ name: "one", input: "x" }] };
    expect((await send("PUT", "/api/v1/suites/mine", key, suite)).status).toBe(201);
    expect((await send("PUT", "/api/v1/suites/mine", key, suite)).status).toBe(200); // replacing it needs no room
    expect((await send("PUT", "/api/v1/suites/another", key, suite)).json).toMatchObject(refused("suites", 1));
    expect((await send("PUT", "/api/v1/suites/theirs", other.key, suite)).status).toBe(201);

    expect((await get(ctx.server, "/api/v1/me", key)).json.storage).toEqual({
      inboxes: { used: 2, limit: 2 },
      shares: { used: 2, limit: 2 },
      threads: { used: 2, limit: 2 },
      suites: { used: 1, limit: 1 },
    });
  });
});

describe("a built-in inbox", () => {
  it("takes deliveries without a key only up to inboxEventBytes, keeps the newest within inboxKeep and inboxBytes, and is read a page at a time", async () => {
    const { key } = await newKey("inbox-owner");
    const inbox = (await post(ctx.server, "/api/v1/inbox", {}, key)).json as { id: string; url: string };
    const deliver = (body: string) => fetch(inbox.url, { method: "POST", headers: { "content-type": "text/plain" }, body });
    const tooLarge = await deliver("x".repeat(4097));
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toMatchObject({ code: "payload_too_large", detail: expect.stringMatching(/inboxEventBytes/) });

    // Ten small deliveries: the newest four stay.
    for (let i = 0; i < 10; i++) expect((await deliver(`small ${i}`)).status).toBe(204);
    const read = (query = "") => get(ctx.server, `/api/v1/inbox/${inbox.id}${query}`, key);
    const all = await read();
    expect(all.json.events.map((e: { body: string }) => e.body)).toEqual(["small 9", "small 8", "small 7", "small 6"]);
    expect(all.json.nextCursor).toBeNull();
    const paged = await read("?limit=3");
    expect(paged.json.events.map((e: { body: string }) => e.body)).toEqual(["small 9", "small 8", "small 7"]);
    const rest = await read(`?limit=3&cursor=${paged.json.nextCursor}`);
    expect([rest.json.events.map((e: { body: string }) => e.body), rest.json.nextCursor]).toEqual([["small 6"], null]);
    expect((await read("?cursor=nonsense")).json).toMatchObject({ code: "validation_failed", errors: [{ path: "?cursor" }] });

    // Four deliveries of 4 KiB: together past inboxBytes (12,000 with their headers), the oldest go;
    // a page holds at most inboxPageBytes (4,096), so one each.
    for (const letter of ["a", "b", "c", "d"]) expect((await deliver(letter.repeat(4000))).status).toBe(204);
    const pages: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await read(cursor ? `?cursor=${cursor}` : "");
      expect(page.status).toBe(200);
      expect(page.json.events).toHaveLength(1);
      pages.push((page.json.events[0].body as string)[0]!);
      cursor = page.json.nextCursor;
    } while (cursor);
    expect(pages).toEqual(["d", "c"]);
  });
});

describe("share links", () => {
  it("stop working when the key that made them is revoked (404 share_not_found, like a revoked link)", async () => {
    const made = await newKey("sharer");
    const run = await post(ctx.server, "/api/v1/generate/text", { input: "shared then revoked", type: "event", workflowSlug: "no-retry", callback: callback() }, made.key);
    const share = await send("POST", `/api/v1/runs/${run.json.metadata.runId}/share`, made.key, { expiresIn: "never" });
    const token = new URL(share.json.url).pathname.split("/").at(-1)!;
    expect((await get(ctx.server, `/api/v1/shared/${token}`, null)).status).toBe(200);
    expect((await send("DELETE", `/api/v1/keys/${made.id}`, ctx.key)).status).toBe(204);
    const gone = await get(ctx.server, `/api/v1/shared/${token}`, null);
    expect([gone.status, gone.json.code]).toEqual([404, "share_not_found"]);
  });
});
