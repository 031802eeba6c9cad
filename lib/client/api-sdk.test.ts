import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError, createApiClient, type StreamEvent } from "./api";

// The playground's runs go through the client package (lib/sdk): the same requests as before, its
// events and errors in the playground's own types.
const metadata = { runId: "run_1", cost: "0", model: { name: "m", tag: "" }, durationInMs: 1, inputTokens: 1, outputTokens: 1 };
const calls: { url: string; init: RequestInit }[] = [];

afterEach(() => {
  vi.unstubAllGlobals();
  calls.length = 0;
});

const serve = (answer: (url: string) => Response) =>
  vi.stubGlobal("fetch", async (url: string, init: RequestInit) => {
    calls.push({ url, init });
    return answer(url);
  });

describe("the playground's client on lib/sdk", () => {
  it("streams: the same request, items, restarts and the end as the playground's events", async () => {
    const sse = [
      `id: 1\ndata: {"type":"object","object":{"text":"{\\"a\\""}}\n\n`,
      `id: 2\nevent: restart\ndata: {"type":"restart","attempt":2}\n\n`,
      `id: 3\ndata: {"type":"object","object":{"text":"{\\"a\\":1}"}}\n\n`,
      `id: 4\nevent: done\ndata: ${JSON.stringify({ runId: "run_1", object: { a: 1 }, metadata })}\n\n`,
    ].join("");
    serve(() => new Response(sse, { headers: { "x-run-id": "run_1", "content-type": "text/event-stream" } }));
    const { runId, events } = await createApiClient("gs_key").streamObject({ input: "x", workflowSlug: "w", schema: { type: "object" } });
    const seen: StreamEvent[] = [];
    for await (const event of events) seen.push(event);
    expect(runId).toBe("run_1");
    expect(calls[0]!.url).toBe("/api/v1/stream/object?cancelOnDisconnect=true");
    expect(calls[0]!.init.headers).toMatchObject({ "Api-Key": "gs_key", Accept: "text/event-stream" });
    expect(seen).toEqual([
      { type: "item", id: 1, text: '{"a"' },
      { type: "restart", attempt: 2 },
      { type: "item", id: 3, text: '{"a":1}' },
      { type: "done", runId: "run_1", object: { a: 1 }, metadata },
    ]);
  });

  it("a stream's error event, and a refused request, as ApiError", async () => {
    const problem = { type: "/docs#error-output_invalid", title: "t", status: 502, detail: "bad", code: "output_invalid", lastOutput: "{", errors: [{ path: "/a", message: "m" }] };
    serve(() => new Response(`id: 1\nevent: error\ndata: ${JSON.stringify(problem)}\n\n`, { headers: { "x-run-id": "run_2" } }));
    const { events } = await createApiClient("k").streamObject({ input: "x", workflowSlug: "w" });
    const seen: StreamEvent[] = [];
    for await (const event of events) seen.push(event);
    const error = (seen[0] as { error: ApiError }).error;
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 502, code: "output_invalid", runId: "run_2", lastOutput: "{", errors: [{ path: "/a", message: "m" }] });

    serve(() => Response.json({ status: 404, code: "workflow_not_found", detail: "No workflow nope" }, { status: 404 }));
    const refused = await createApiClient("k").generateObject({ input: "x", type: "event", workflowSlug: "nope", callback: { url: "https://example.com/h" } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 404, code: "workflow_not_found", detail: "No workflow nope" });
    expect(calls.at(-1)!.url).toBe("/api/v1/generate/object?cancelOnDisconnect=true");
  });
});
