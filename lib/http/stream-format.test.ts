import { describe, expect, it } from "vitest";
import { StreamHub } from "../runs/stream-hub";
import { chatChunkEncoder } from "./openai/chat-chunks";
import { encodeBatch, ndjsonEncoder, sseEncoder, streamResponse } from "./stream-format";

const metadata = { runId: "run_1", cost: "0", model: { name: "m", tag: "t" }, durationInMs: 1, inputTokens: 1, outputTokens: 1 };

/** A hub with one finished run: two items, a restart, an item, done. */
function finishedRun() {
  const hub = new StreamHub({ retainMs: 60_000 });
  const writer = hub.open("run_1", "key_1");
  writer.push({ kind: "item", text: '{"a":' });
  writer.push({ kind: "restart", attempt: 2 });
  writer.push({ kind: "item", text: '{"a":1}' });
  writer.push({ kind: "done", payload: { runId: "run_1", object: { a: 1 }, metadata } });
  writer.end();
  return hub;
}

describe("stream framing", () => {
  it("frames SSE with ids, restart and done events, and the stream headers", async () => {
    const hub = finishedRun();
    const res = streamResponse(hub, "run_1", { accept: "text/event-stream", keepAliveMs: 15_000 });
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(res.headers.get("x-run-id")).toBe("run_1");
    expect(res.headers.get("cache-control")).toBe("no-cache, no-transform");
    expect(await res.text()).toBe(
      [
        'id: 1\ndata: {"type":"object","object":{"text":"{\\"a\\":"}}\n\n',
        'id: 2\nevent: restart\ndata: {"type":"restart","attempt":2}\n\n',
        'id: 3\ndata: {"type":"object","object":{"text":"{\\"a\\":1}"}}\n\n',
        `id: 4\nevent: done\ndata: ${JSON.stringify({ runId: "run_1", object: { a: 1 }, metadata })}\n\n`,
      ].join(""),
    );
    hub.close();
  });

  it("frames NDJSON one event a line, and resumes after a sequence number", async () => {
    const hub = finishedRun();
    const res = streamResponse(hub, "run_1", { accept: "application/x-ndjson", afterSeq: 2, keepAliveMs: 15_000 });
    expect(res.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    const lines = (await res.text()).trim().split("\n").map((l) => JSON.parse(l));
    expect(lines).toEqual([{ type: "object", object: { text: '{"a":1}' } }, { type: "done", runId: "run_1", object: { a: 1 }, metadata }]);
    hub.close();
  });

  it("ends an error event with the problem, and keeps an idle SSE stream alive with comments", async () => {
    const hub = new StreamHub({ retainMs: 60_000 });
    const writer = hub.open("run_2", "key_1");
    const res = streamResponse(hub, "run_2", { accept: null, keepAliveMs: 30 });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes(": ping")) text += (await reader.read()).value ?? "";
    writer.push({ kind: "error", problem: { type: "/docs#error-model_error", title: "t", status: 502, detail: "d", code: "model_error", runId: "run_2" } });
    writer.end();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += chunk.value;
    expect(text).toMatch(/id: 1\nevent: error\ndata: \{"type":"\/docs#error-model_error".*"code":"model_error"/);
    hub.close();
  });
  it("frames field events in both formats; they split joined items, keeping their own ids", () => {
    const batch = [
      { seq: 3, kind: "item", text: '{"a":' },
      { seq: 4, kind: "item", text: '"x"' },
      { seq: 5, kind: "field", attempt: 1, pointer: "/a", value: "x", valid: true },
      { seq: 6, kind: "item", text: "}" },
      { seq: 7, kind: "field", attempt: 1, pointer: "", value: { a: "x" }, valid: null },
    ] as const;
    expect(encodeBatch(sseEncoder, batch)).toBe(
      [
        'id: 4\ndata: {"type":"object","object":{"text":"{\\"a\\":\\"x\\""}}\n\n',
        'id: 5\nevent: field\ndata: {"type":"field","attempt":1,"pointer":"/a","value":"x","valid":true}\n\n',
        'id: 6\ndata: {"type":"object","object":{"text":"}"}}\n\n',
        'id: 7\nevent: field\ndata: {"type":"field","attempt":1,"pointer":"","value":{"a":"x"},"valid":null}\n\n',
      ].join(""),
    );
    expect(encodeBatch(ndjsonEncoder, batch).trim().split("\n").map((line) => JSON.parse(line))).toEqual([
      { type: "object", object: { text: '{"a":"x"' } },
      { type: "field", attempt: 1, pointer: "/a", value: "x", valid: true },
      { type: "object", object: { text: "}" } },
      { type: "field", attempt: 1, pointer: "", value: { a: "x" }, valid: null },
    ]);
  });

  it("joins items that wait together into one event with the last one's id, first item at once", async () => {
    expect(
      encodeBatch(sseEncoder, [
        { seq: 5, kind: "item", text: '{"a"' },
        { seq: 6, kind: "item", text: ":1" },
        { seq: 7, kind: "restart", attempt: 2 },
        { seq: 8, kind: "item", text: "{" },
      ]),
    ).toBe(
      [
        'id: 6\ndata: {"type":"object","object":{"text":"{\\"a\\":1"}}\n\n',
        'id: 7\nevent: restart\ndata: {"type":"restart","attempt":2}\n\n',
        'id: 8\ndata: {"type":"object","object":{"text":"{"}}\n\n',
      ].join(""),
    );
    // A live run: the first item goes out alone as soon as it is pushed; items pushed together while
    // the follower waits go out as one event, and nothing is lost or reordered.
    const hub = new StreamHub({ retainMs: 60_000 });
    const writer = hub.open("run_2", "key_1");
    const got: string[][] = [];
    const following = (async () => {
      for await (const batch of hub.followBatches("run_2", 0)) got.push(batch.map((e) => (e.kind === "item" ? e.text : e.kind)));
    })();
    writer.push({ kind: "item", text: "[" });
    await new Promise((r) => setTimeout(r, 5));
    expect(got).toEqual([["["]]);
    for (const t of ["1", ",", "2", "]"]) writer.push({ kind: "item", text: t });
    writer.push({ kind: "done", payload: { runId: "run_2", object: [1, 2], metadata } });
    writer.end();
    await following;
    expect(got).toEqual([["["], ["1", ",", "2", "]", "done"]]);
    hub.close();
  });

  it("closes the response when the encoder has ended though the run goes on (OpenAI's chunks at a restart)", async () => {
    const hub = new StreamHub({ retainMs: 60_000 });
    const writer = hub.open("run_3", "key_1");
    const encoder = chatChunkEncoder({ id: "run_3", model: "m", created: 1 }, { includeUsage: false });
    const res = streamResponse(hub, "run_3", { accept: null, encoder, keepAliveMs: 30 });
    writer.push({ kind: "item", text: "{" });
    writer.push({ kind: "restart", attempt: 2 });
    // The run is still live (no final event, the writer open): the body must end all the same,
    // right after the error, without keep-alive comments.
    const text = await res.text();
    expect(text.trimEnd().split("\n\n").at(-1)).toMatch(/^data: \{"error":\{.*"code":"output_restarted"/);
    expect(text).not.toContain(": ping");
    writer.end();
    hub.close();
  });
});
