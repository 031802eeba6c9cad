import { describe, expect, it } from "vitest";
import { isGenserveError } from "../errors";
import { LaneQueue } from "./lanes";

// Issue 31: a local model's lanes shared between keys — one key's burst neither takes every place
// in the queue nor every lane that frees.

const never = new AbortController().signal;
const refusal = (promise: Promise<unknown>) => promise.then(() => null, (e: unknown) => (isGenserveError(e) ? e.code : e));

describe("LaneQueue", () => {
  it("hands a freed lane to the key holding the fewest, oldest first among them", async () => {
    const q = new LaneQueue({ lanes: 1, queue: 8, alias: "tiny" });
    const first = await q.acquire("a", never);
    const order: string[] = [];
    const wait = (owner: string, name: string) => q.acquire(owner, never).then((held) => (order.push(name), held));
    const a2 = wait("a", "a2");
    const a3 = wait("a", "a3");
    const b1 = wait("b", "b1");
    first.release();
    (await b1).release(); // b held none while a held the lane; b1 went first although a2 and a3 waited longer
    (await a2).release();
    (await a3).release();
    expect(order).toEqual(["b1", "a2", "a3"]);
  });

  it("keeps half the queue for other keys: a key past its share is refused, another key still waits", async () => {
    const q = new LaneQueue({ lanes: 1, queue: 4, alias: "tiny" });
    await q.acquire("a", never);
    const waiting = [q.acquire("a", never), q.acquire("a", never)];
    expect(await refusal(q.acquire("a", never))).toBe("model_busy");
    const b = q.acquire("b", never);
    expect(q.waitingRuns).toBe(3);
    q.acquire("b", never).catch(() => undefined);
    expect(await refusal(q.acquire("c", never))).toBe("model_busy"); // the queue itself is full
    void waiting;
    void b;
  });

  it("gives a place back when a waiting run is aborted", async () => {
    const q = new LaneQueue({ lanes: 1, queue: 2, alias: "tiny" });
    const held = await q.acquire("a", never);
    const abort = new AbortController();
    const gone = q.acquire("a", abort.signal);
    abort.abort(new Error("deadline"));
    await expect(gone).rejects.toThrow("deadline");
    expect(q.waitingRuns).toBe(0);
    const next = q.acquire("a", never);
    held.release();
    expect((await next).lane).toBe(0);
  });
});
