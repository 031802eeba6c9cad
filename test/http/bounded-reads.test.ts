import { beforeAll, describe, expect, it } from "vitest";
import { CALLBACK, INVOICE_SCHEMA } from "../helpers/config";
import { createKey, get, post } from "../helpers/genserve";
import { readSse, streamRequest } from "../helpers/streams";
import { useGenserve } from "../helpers/suite";

// Issue 31 (2.1, 2.2): one ordinary key must not be able to make the server build huge bodies —
// a thread read whole, a page of runs carrying every input whole, a search reading every run.
// Bounds are set small here so that a few runs cross them; the defaults are in the README.
const PAGE_BYTES = 262_144;
const ctx = useGenserve(`
limits:
  threadBytes: 1048576
  threadMessages: 12
  threadPageBytes: ${PAGE_BYTES}
  runSearchBytes: 1048576
`);

let user: { key: string };
let bystander: { key: string };
beforeAll(async () => {
  [user, bystander] = await Promise.all([createKey("reader", { dataDir: ctx.server.dataDir }), createKey("bystander", { dataDir: ctx.server.dataDir })]);
});

const waitFor = async (check: () => Promise<boolean>, what: string) => {
  for (let i = 0; i < 1_200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
};

/** One turn of a thread through stream/object, to its final event and its messages stored. */
async function turn(threadId: string, input: string): Promise<void> {
  const { events } = await readSse(await streamRequest(ctx.server.url, user.key, { input, workflowSlug: "extract-invoice", schema: INVOICE_SCHEMA, threadId }));
  expect(events.at(-1)!.event).toBe("done");
  const { runId } = JSON.parse(events.at(-1)!.data) as { runId: string };
  const stored = async () => ((await get(ctx.server, `/api/v1/threads/${threadId}?order=desc&limit=1`, user.key)).json?.messages ?? []).some((m: { runId: string }) => m.runId === runId);
  await waitFor(stored, `the turn of ${threadId} to be stored`);
}

type ThreadPage = { messageCount: number; bytes: number; messages: { role: string; content: string; bytes: number; truncated: boolean; runId: string }[]; nextCursor: string | null };

describe("threads: paged, bounded, limited", () => {
  it("serves a thread a page at a time within limits.threadPageBytes, and refuses a turn past limits.threadBytes with 409 thread_full", async () => {
    const inputs = Array.from({ length: 5 }, (_, i) => `turn ${i} ${"t".repeat(200_000)}`);
    for (const input of inputs) await turn("big", input);

    const pages: ThreadPage[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(ctx.server, `/api/v1/threads/big${cursor ? `?cursor=${cursor}` : ""}`, user.key);
      expect(res.status).toBe(200);
      // The page's body stays near its content bound, whatever the thread holds.
      expect(res.text.length).toBeLessThan(PAGE_BYTES + 16_384);
      pages.push(res.json);
      cursor = res.json.nextCursor;
    } while (cursor && pages.length < 20);
    expect(pages.length).toBeGreaterThan(1);
    expect(pages[0]).toMatchObject({ messageCount: 10, bytes: expect.any(Number) });
    expect(pages[0]!.bytes).toBeGreaterThan(1_000_000);
    for (const page of pages) expect(page.messages.reduce((n, m) => n + m.bytes, 0)).toBeLessThanOrEqual(PAGE_BYTES);
    const all = pages.flatMap((p) => p.messages);
    expect(all.filter((m) => m.role === "user").map((m) => m.content)).toEqual(inputs);
    expect(all.map((m) => m.role)).toEqual(Array.from({ length: 10 }, (_, i) => (i % 2 ? "assistant" : "user")));

    const newest = await get(ctx.server, "/api/v1/threads/big?order=desc&limit=1", user.key);
    expect(newest.json.messages.map((m: { role: string }) => m.role)).toEqual(["assistant"]);
    expect((await get(ctx.server, `/api/v1/threads/big?order=desc&cursor=${pages[0]!.nextCursor}`, user.key)).json.errors[0].path).toBe("?cursor");
    expect((await get(ctx.server, "/api/v1/threads/big?cursor=nope", user.key)).status).toBe(400);

    // A sixth turn of the same size would pass the thread's 1 MiB.
    const full = await post(ctx.server, "/api/v1/stream/object", { input: inputs[0], schema: INVOICE_SCHEMA, threadId: "big" }, user.key);
    expect(full.status).toBe(409);
    expect(full.json).toMatchObject({ code: "thread_full", errors: [{ path: "/threadId", message: "is full" }] });
    expect(full.json.detail).toContain("limits.threadBytes");
  });

  it("cuts a message larger than a page to it, marked truncated; its run has it whole", async () => {
    const input = "w".repeat(300_000);
    await turn("wide", input);
    const page: ThreadPage = (await get(ctx.server, "/api/v1/threads/wide?limit=1", user.key)).json;
    expect(page.messages[0]).toMatchObject({ role: "user", bytes: 300_000, truncated: true });
    expect(page.messages[0]!.content).toBe(input.slice(0, PAGE_BYTES));
    const run = await get(ctx.server, `/api/v1/runs/${page.messages[0]!.runId}`, user.key);
    expect(run.json.input).toBe(input);
  });

  it("refuses a turn past limits.threadMessages, and keeps serving another key while many pages are read at once", async () => {
    for (let i = 0; i < 6; i++) await turn("chatty", `hello ${i}`);
    const full = await post(ctx.server, "/api/v1/stream/object", { input: "one more", schema: INVOICE_SCHEMA, threadId: "chatty" }, user.key);
    expect(full.status).toBe(409);
    expect(full.json).toMatchObject({ code: "thread_full", errors: [{ path: "/threadId" }] });
    expect(full.json.detail).toContain("limits.threadMessages");

    const reads = Array.from({ length: 24 }, () => get(ctx.server, "/api/v1/threads/big", user.key));
    const other = await get(ctx.server, "/api/v1/me", bystander.key);
    expect(other.status).toBe(200);
    for (const res of await Promise.all(reads)) {
      expect(res.status).toBe(200);
      expect(res.text.length).toBeLessThan(PAGE_BYTES + 16_384);
    }
  });
});

describe("run lists: previews, a bounded search", () => {
  let searcher: { key: string };
  const ids: string[] = [];
  beforeAll(async () => {
    searcher = await createKey("searcher", { dataDir: ctx.server.dataDir });
    // Four runs of about 1 MB (the fake model echoes each), a term only at the start of the oldest
    // and another one past the first limits.runSearchChars (16,384) characters of every input.
    for (let i = 0; i < 4; i++) {
      const input = `${i === 0 ? "zebra " : ""}run ${i} ${"r".repeat(500_000)} giraffe ${"r".repeat(499_000)}`;
      const res = await post(ctx.server, "/api/v1/generate/text", { input, type: "event", callback: CALLBACK, workflowSlug: "no-retry" }, searcher.key);
      expect(res.status).toBe(200);
      ids.push(res.json.metadata.runId);
    }
  });

  it("lists previews of inputs and outputs with their sizes; the run page has them whole", async () => {
    const res = await get(ctx.server, "/api/v1/runs?limit=100", searcher.key);
    expect(res.status).toBe(200);
    // Four runs of 1 MB inputs and 1 MB outputs: a few KiB each.
    expect(res.text.length).toBeLessThan(4 * 16_384);
    expect(res.json.runs.map((r: { id: string }) => r.id)).toEqual([...ids].reverse());
    const oldest = res.json.runs.at(-1);
    expect(oldest).toMatchObject({ inputBytes: expect.any(Number), outputBytes: expect.any(Number), output: null, truncated: ["input", "output"] });
    expect(oldest.inputBytes).toBeGreaterThan(999_000);
    expect(oldest.input).toMatch(/^zebra run 0 r+$/);
    expect(oldest.input.length).toBe(2_048);
    // A text output previews as its text (the preview's characters counted on its JSON text).
    expect(oldest.outputPreview).toMatch(/^echo: zebra run 0 r+$/);
    expect(oldest.outputPreview.length).toBe(2_047);
    const whole = await get(ctx.server, `/api/v1/runs/${ids[0]}`, searcher.key);
    expect(whole.json.input.length).toBe(oldest.inputBytes);
    expect(whole.json.output).toBe(`echo: ${whole.json.input}`);
  });

  /** Every page of a search, following its cursors. */
  const search = async (q: string) => {
    const pages: { runs: { id: string }[]; nextCursor: string | null }[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(ctx.server, `/api/v1/runs?q=${q}${cursor ? `&cursor=${cursor}` : ""}`, searcher.key);
      expect(res.status).toBe(200);
      pages.push(res.json);
      cursor = res.json.nextCursor;
    } while (cursor && pages.length < 10);
    return pages.map((p) => p.runs.map((r) => r.id));
  };

  it("searches within limits.runSearchBytes per request, handing back a cursor to search on, and only the start of each input", async () => {
    // 1 MiB of inputs per request: one run of about 1 MB each, the match in the fourth.
    expect(await search("zebra")).toEqual([[], [], [], [ids[0]]]);
    // Past the first 16,384 characters of every input: not searched.
    expect((await search("giraffe")).flat()).toEqual([]);
    // A run id is found at once.
    expect((await get(ctx.server, `/api/v1/runs?q=${ids[0]}`, searcher.key)).json.runs.map((r: { id: string }) => r.id)).toEqual([ids[0]]);
  });

  it("keeps serving another key while many lists and searches run at once", async () => {
    const lists = Array.from({ length: 30 }, (_, i) => get(ctx.server, i % 2 ? "/api/v1/runs?limit=100" : "/api/v1/runs?q=nothing-like-this", searcher.key));
    const other = await get(ctx.server, "/api/v1/me", bystander.key);
    expect(other.status).toBe(200);
    for (const res of await Promise.all(lists)) {
      expect(res.status).toBe(200);
      expect(res.text.length).toBeLessThan(4 * 16_384);
    }
  });
});
