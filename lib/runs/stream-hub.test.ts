import { describe, expect, it } from "vitest";
import { StreamHub } from "./stream-hub";

const collect = async <T>(iterable: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
};

describe("StreamHub", () => {
  it("replays events after a sequence number, then follows live ones to the end", async () => {
    const hub = new StreamHub(60_000);
    const writer = hub.open("run_1", "key_a");
    writer.push({ kind: "item", text: "{" });
    writer.push({ kind: "item", text: '"a"' });
    const following = collect(hub.follow("run_1", 1));
    writer.push({ kind: "item", text: ":1}" });
    writer.push({ kind: "done", payload: { runId: "run_1", object: { a: 1 }, metadata: {} as never } });
    writer.push({ kind: "item", text: "ignored after the end" });
    expect((await following).map((e) => e.seq)).toEqual([2, 3, 4]);
    expect(hub.owner("run_1")).toBe("key_a");
    hub.close();
  });

  it("forgets ended runs after the retention time", () => {
    let now = 0;
    const hub = new StreamHub(1_000, () => now);
    hub.open("run_1", "k").end();
    hub.open("run_2", "k");
    now = 1_000;
    hub.sweep();
    expect(hub.owner("run_1")).toBeNull();
    expect(hub.owner("run_2")).toBe("k"); // still running
    hub.close();
  });
});
