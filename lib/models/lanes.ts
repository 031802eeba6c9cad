import "server-only";
import { GenserveError } from "../errors";

interface Waiter {
  owner: string;
  resolve: (lane: number) => void;
  reject: (error: unknown) => void;
}

/**
 * A local model's lanes (its parallel sequences) and the runs waiting for one, shared between keys:
 * a freed lane goes to the waiting run whose key holds the fewest lanes, then whose key was served
 * longest ago, then the oldest; and no key may take more than half of the queue's places (rounded
 * up), so one key's burst cannot fill the queue and answer every other key 429 `model_busy`.
 */
export class LaneQueue {
  private readonly free: number[];
  private readonly waiting: Waiter[] = [];
  /** Lanes held, and places in the queue taken, per key. */
  private readonly holding = new Map<string, number>();
  private readonly queued = new Map<string, number>();
  /** When each key was last handed a lane (a tick of `handOuts`), for turns between keys holding as many; one entry per key that used the model. */
  private readonly lastServed = new Map<string, number>();
  private handOuts = 0;

  constructor(
    private readonly options: { lanes: number; queue: number; alias: string },
  ) {
    this.free = Array.from({ length: options.lanes }, (_, i) => options.lanes - 1 - i);
  }

  /** The most places one key may take in the queue. */
  get share(): number {
    return Math.max(1, Math.ceil(this.options.queue / 2));
  }

  get busyLanes(): number {
    return this.options.lanes - this.free.length;
  }

  get waitingRuns(): number {
    return this.waiting.length;
  }

  /** Waits for a free lane (or fails at once when the queue, or the key's share of it, is full). */
  async acquire(owner: string, signal: AbortSignal): Promise<{ lane: number; release: () => void }> {
    signal.throwIfAborted();
    const lane = this.free.pop();
    if (lane !== undefined) {
      this.assign(owner);
      return this.handle(owner, lane);
    }
    const mine = this.queued.get(owner) ?? 0;
    if (this.waiting.length >= this.options.queue || mine >= this.share) {
      const { lanes, alias } = this.options;
      throw new GenserveError("model_busy", {
        detail:
          mine >= this.share
            ? `All ${lanes} lanes of model "${alias}" are busy and this key already has ${mine} runs waiting for one (half the queue); try again shortly.`
            : `All ${lanes} lanes of model "${alias}" are busy and ${this.waiting.length} runs are waiting; try again shortly.`,
        headers: { "Retry-After": "1" },
      });
    }
    const given = await new Promise<number>((resolve, reject) => {
      const waiter: Waiter = { owner, resolve, reject };
      this.waiting.push(waiter);
      this.queued.set(owner, mine + 1);
      signal.addEventListener(
        "abort",
        () => {
          if (this.dequeue(waiter)) reject(signal.reason);
        },
        { once: true },
      );
    });
    return this.handle(owner, given);
  }

  /** A lane goes to `owner`: counted at once (not when its waiter resumes), so two releases in one tick see it. */
  private assign(owner: string): void {
    this.holding.set(owner, (this.holding.get(owner) ?? 0) + 1);
    this.lastServed.set(owner, ++this.handOuts);
  }

  private handle(owner: string, lane: number): { lane: number; release: () => void } {
    let released = false;
    return {
      lane,
      release: () => {
        if (released) return;
        released = true;
        count(this.holding, owner, -1);
        const next = this.next();
        if (next) {
          this.dequeue(next);
          this.assign(next.owner);
          next.resolve(lane);
        } else this.free.push(lane);
      },
    };
  }

  /** The waiter whose key holds the fewest lanes, then whose key was served longest ago, then the oldest. */
  private next(): Waiter | undefined {
    let best: Waiter | undefined;
    let rank = [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY];
    for (const waiter of this.waiting) {
      const mine = [this.holding.get(waiter.owner) ?? 0, this.lastServed.get(waiter.owner) ?? 0];
      if (mine[0]! < rank[0]! || (mine[0] === rank[0] && mine[1]! < rank[1]!)) {
        best = waiter;
        rank = mine;
      }
    }
    return best;
  }

  private dequeue(waiter: Waiter): boolean {
    const i = this.waiting.indexOf(waiter);
    if (i < 0) return false;
    this.waiting.splice(i, 1);
    count(this.queued, waiter.owner, -1);
    return true;
  }
}

function count(map: Map<string, number>, key: string, delta: number): void {
  const n = (map.get(key) ?? 0) + delta;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}
