import { afterEach, describe, expect, it, vi } from "vitest";
import { heartbeatEvery, LeasedWorker, type LeasedWorkerOptions } from "./leased-worker";

/** A queue of item ids and work that ends only when the test lets it (`finish`). */
function fixture(ids: string[]) {
  const queue = [...ids];
  const claims: number[] = [];
  const started: string[] = [];
  const gates = new Map<string, () => void>();
  const errors: [unknown, string][] = [];
  return {
    queue,
    claims,
    started,
    errors,
    finish(id: string) {
      gates.get(id)!();
    },
    options(over: Partial<LeasedWorkerOptions<string>> = {}): LeasedWorkerOptions<string> {
      return {
        concurrency: 2,
        refill: "always",
        id: (item) => item,
        claim: async (max) => {
          claims.push(max);
          return queue.splice(0, max);
        },
        work: (item) => {
          started.push(item);
          return new Promise<void>((resolve) => gates.set(item, resolve));
        },
        onError: (error, where) => errors.push([error, where]),
        ...over,
      };
    },
  };
}

let worker: LeasedWorker<string> | undefined;
afterEach(() => {
  worker?.stop();
  worker = undefined;
});

describe("LeasedWorker", () => {
  it("claims as many items as it has free slots, and no more while they all run", async () => {
    const f = fixture(["a", "b", "c"]);
    worker = new LeasedWorker(f.options());
    worker.start();
    await vi.waitFor(() => expect(f.started).toEqual(["a", "b"]));
    expect(f.claims).toEqual([2]);
    worker.kick();
    await vi.waitFor(() => expect(worker!.busy).toBe(2));
    expect(f.started).toEqual(["a", "b"]);
    expect(f.queue).toEqual(["c"]);
  });

  it("with refill 'always', a slot that frees takes the next item at once", async () => {
    const f = fixture(["a", "b"]);
    worker = new LeasedWorker(f.options({ concurrency: 1 }));
    worker.start();
    await vi.waitFor(() => expect(f.started).toEqual(["a"]));
    f.finish("a");
    await vi.waitFor(() => expect(f.started).toEqual(["a", "b"]));
  });

  it("with refill 'if-saturated', looks again when an item ends only if the last pass filled every slot", async () => {
    const f = fixture(["a"]);
    worker = new LeasedWorker(f.options({ concurrency: 2, refill: "if-saturated" }));
    worker.start();
    await vi.waitFor(() => expect(f.started).toEqual(["a"]));
    f.queue.push("b");
    f.finish("a");
    await vi.waitFor(() => expect(worker!.busy).toBe(0));
    expect(f.started).toEqual(["a"]); // not saturated: nobody looked
    worker.kick();
    await vi.waitFor(() => expect(f.started).toEqual(["a", "b"]));
    f.queue.push("c", "d", "e");
    worker.kick();
    await vi.waitFor(() => expect(f.started).toEqual(["a", "b", "c"]));
    // Now saturated (the pass took the one slot it had): an item ending looks again.
    f.finish("b");
    await vi.waitFor(() => expect(f.started).toEqual(["a", "b", "c", "d"]));
  });

  it("claims one at a time, in order, while it gets one and has room", async () => {
    const f = fixture(["a", "b", "c", "d"]);
    worker = new LeasedWorker(f.options({ concurrency: 3, oneAtATime: true }));
    worker.start();
    await vi.waitFor(() => expect(f.started).toEqual(["a", "b", "c"]));
    expect(f.claims).toEqual([1, 1, 1]);
  });

  it("started with kick false, claims nothing until kicked", async () => {
    const f = fixture(["a"]);
    worker = new LeasedWorker(f.options());
    worker.start({ kick: false });
    await new Promise((r) => setTimeout(r, 30));
    expect(f.claims).toEqual([]);
    worker.kick();
    await vi.waitFor(() => expect(f.started).toEqual(["a"]));
  });

  it("looks for work on its timer", async () => {
    const f = fixture([]);
    worker = new LeasedWorker(f.options({ pollMs: 20 }));
    worker.start();
    await vi.waitFor(() => expect(f.claims.length).toBeGreaterThan(0));
    f.queue.push("a");
    await vi.waitFor(() => expect(f.started).toEqual(["a"]));
  });

  it("never runs two passes at once; a kick during a pass runs one more after it", async () => {
    let release!: () => void;
    let inPass = 0;
    let most = 0;
    const f = fixture([]);
    const claim = vi.fn(async () => {
      most = Math.max(most, ++inPass);
      if (claim.mock.calls.length === 1) await new Promise<void>((r) => (release = r));
      inPass--;
      return [];
    });
    worker = new LeasedWorker(f.options({ claim }));
    worker.kick();
    await vi.waitFor(() => expect(claim).toHaveBeenCalledTimes(1));
    worker.kick();
    worker.kick();
    release();
    await vi.waitFor(() => expect(claim).toHaveBeenCalledTimes(2));
    expect(await worker.idle(1_000)).toBe(true);
    expect(claim).toHaveBeenCalledTimes(2);
    expect(most).toBe(1);
  });

  it("renews the leases of the items in progress on its heartbeat and tells which were lost", async () => {
    const f = fixture(["a", "b"]);
    const renewed: string[][] = [];
    const lost: string[] = [];
    let beats = 0;
    worker = new LeasedWorker(
      f.options({
        heartbeat: {
          everyMs: 20,
          renew: async (ids) => {
            renewed.push([...ids].sort());
            return ids.filter((id) => id !== "b");
          },
          lost: (id) => lost.push(id),
          then: async () => void beats++,
        },
      }),
    );
    worker.start();
    await vi.waitFor(() => expect(lost).toContain("b"));
    expect(renewed[renewed.length - 1]).toEqual(["a", "b"]);
    expect(lost.every((id) => id === "b")).toBe(true);
    expect(beats).toBeGreaterThan(0);
  });

  it("asks `held` for the ids to renew, skips the renewal when there are none, and reports a failed beat", async () => {
    const f = fixture([]);
    let held: string[] = [];
    const renew = vi.fn(async () => {
      throw new Error("storage down");
    });
    worker = new LeasedWorker(f.options({ heartbeat: { everyMs: 20, held: () => held, renew } }));
    worker.start();
    await new Promise((r) => setTimeout(r, 60));
    expect(renew).not.toHaveBeenCalled();
    held = ["x"];
    await vi.waitFor(() => expect(f.errors.map(([, where]) => where)).toContain("heartbeat"));
    expect(renew).toHaveBeenCalledWith(["x"]);
  });

  it("reserves slots ahead of claims: a reserved slot is not claimed for, and is launched or given back once", async () => {
    const f = fixture(["a", "b"]);
    worker = new LeasedWorker(f.options({ concurrency: 2 }));
    const first = worker.reserve()!;
    const second = worker.reserve()!;
    expect(worker.reserve()).toBeNull();
    worker.kick();
    await vi.waitFor(() => expect(worker!.busy).toBe(0));
    expect(f.claims).toEqual([]);
    first.launch("r");
    expect(() => first.release()).toThrow(/once/);
    await vi.waitFor(() => expect(f.started).toEqual(["r"]));
    second.release();
    worker.kick();
    await vi.waitFor(() => expect(f.started).toEqual(["r", "a"]));
    expect(f.claims).toEqual([1]);
  });

  it("drains: claims nothing more, waits for the items in progress, and gives up at the deadline", async () => {
    const f = fixture(["a", "b", "c"]);
    worker = new LeasedWorker(f.options());
    worker.start();
    await vi.waitFor(() => expect(f.started).toEqual(["a", "b"]));
    const drained = worker.drain(10_000);
    f.finish("a");
    f.finish("b");
    expect(await drained).toBe(true);
    expect(f.started).toEqual(["a", "b"]);
    expect(worker.closed).toBe(true);
    expect(worker.reserve()).toBeNull();

    const g = fixture(["x"]);
    const stuck = new LeasedWorker(g.options());
    stuck.start();
    await vi.waitFor(() => expect(g.started).toEqual(["x"]));
    expect(await stuck.drain(30)).toBe(false);
    expect(stuck.busy).toBe(1);
    g.finish("x");
    expect(await stuck.idle(10_000)).toBe(true);
  });

  it("keeps the leases of the items in progress while it drains, and stops beating once drained", async () => {
    const f = fixture(["a"]);
    const renewed: string[][] = [];
    worker = new LeasedWorker(f.options({ heartbeat: { everyMs: 10, renew: async (ids) => (renewed.push([...ids]), [...ids]) } }));
    worker.start();
    await vi.waitFor(() => expect(f.started).toEqual(["a"]));
    const drained = worker.drain(10_000);
    const before = renewed.length;
    await vi.waitFor(() => expect(renewed.length).toBeGreaterThan(before + 1));
    f.finish("a");
    expect(await drained).toBe(true);
    const after = renewed.length;
    await new Promise((resolve) => setTimeout(resolve, 50)); // only to see that nothing more happens
    expect(renewed.length).toBe(after);
  });

  it("an item claimed again while it still runs here runs once, and counts until it ends", async () => {
    const f = fixture([]);
    const claimed: string[][] = [["a"], ["a"]];
    worker = new LeasedWorker(f.options({ claim: async () => claimed.shift() ?? [] }));
    worker.start();
    await vi.waitFor(() => expect(f.started).toEqual(["a"]));
    worker.kick();
    await vi.waitFor(() => expect(claimed).toEqual([]));
    expect(await worker.idle(30)).toBe(false);
    expect(f.started).toEqual(["a"]);
    expect(worker.held).toEqual(["a"]);
    f.finish("a");
    expect(await worker.idle(10_000)).toBe(true);
    expect(worker.busy).toBe(0);
  });

  it("reports work and claims that fail, and keeps going", async () => {
    const f = fixture([]);
    let calls = 0;
    worker = new LeasedWorker(
      f.options({
        claim: async () => (++calls === 1 ? Promise.reject(new Error("claim failed")) : calls === 2 ? ["bad"] : []),
        work: async () => {
          throw new Error("work failed");
        },
      }),
    );
    worker.kick();
    await vi.waitFor(() => expect(f.errors.map(([, where]) => where)).toEqual(["claim"]));
    worker.kick();
    await vi.waitFor(() => expect(f.errors.map(([, where]) => where)).toEqual(["claim", "work"]));
  });

  it("beats three times a lease, at least every 250 ms", () => {
    expect(heartbeatEvery(30_000)).toBe(10_000);
    expect(heartbeatEvery(300)).toBe(250);
  });
});
