import { describe, expect, it } from "vitest";
import { readServerEvents } from "./event-stream-reader";

const body = (...chunks: string[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });

const all = async (stream: ReadableStream<Uint8Array>) => {
  const out = [];
  for await (const event of readServerEvents(stream)) out.push(event);
  return out;
};

describe("readServerEvents", () => {
  it("reads genserve's framing: ids, named events, pings skipped", async () => {
    const text = 'id: 1\ndata: {"a":1}\n\n: ping\n\nid: 2\nevent: restart\ndata: {"type":"restart"}\n\nid: 3\nevent: done\ndata: {}\n\n';
    expect(await all(body(text))).toEqual([
      { id: "1", event: "message", data: '{"a":1}' },
      { id: "2", event: "restart", data: '{"type":"restart"}' },
      { id: "3", event: "done", data: "{}" },
    ]);
  });

  it("gives the same events however the bytes are split, with CRLF, CR or LF line ends", async () => {
    const text = "id: 7\r\ndata: one\r\ndata: two\r\n\r\nevent: x\rdata: three\r\rdata:four\n\n";
    const expected = [
      { id: "7", event: "message", data: "one\ntwo" },
      { event: "x", data: "three" },
      { event: "message", data: "four" },
    ];
    expect(await all(body(text))).toEqual(expected);
    // Every split point, including inside a CRLF and inside a multi-byte character.
    const bytes = new TextEncoder().encode(text.replace("three", "thrée"));
    for (let at = 1; at < bytes.length; at++) {
      const split = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes.slice(0, at));
          controller.enqueue(bytes.slice(at));
          controller.close();
        },
      });
      const events = await all(split);
      expect(events.map((e) => e.data)).toEqual(["one\ntwo", "thrée", "four"]);
    }
  });

  it("drops an event the body ended in the middle of", async () => {
    expect(await all(body("id: 1\ndata: whole\n\nid: 2\ndata: cut"))).toEqual([{ id: "1", event: "message", data: "whole" }]);
  });
});
