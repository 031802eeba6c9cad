import "server-only";

/**
 * The heartbeat of leased work: every `everyMs` the leases of the items held here are renewed
 * (`renew`), those the store says are no longer held (cancelled elsewhere, taken over) are `lost`,
 * then `then` does whatever else belongs on the beat. A failed beat is reported and the next one
 * tries again.
 */
export interface LeaseHeartbeat {
  everyMs: number;
  /** Ids whose leases to renew; by default the items this worker is working on. */
  held?: () => readonly string[];
  /** Renews the leases of `ids` (asked only when there are some); returns the ids still held, or nothing when the store does not say. */
  renew(ids: readonly string[]): Promise<readonly string[] | void>;
  /** Told of each id whose lease was not renewed. */
  lost?(id: string): void;
  /** More work on each beat, after the renewal. */
  then?(): Promise<void>;
}

export interface LeasedWorkerOptions<T> {
  /** Items worked on at once. */
  concurrency: number;
  /**
   * Claims up to `max` due items, each under a lease held by this process; fewer (none) when no
   * more are due. With `oneAtATime`, a claim returns at most one item and a pass claims again
   * while it gets one and has room (stores whose claim takes one item, in their order).
   */
  claim(max: number): Promise<readonly T[]>;
  oneAtATime?: boolean;
  /** Works on one claimed item to its end. */
  work(item: T): Promise<void>;
  /** An item's id (its lease's key). */
  id(item: T): string;
  /**
   * When an item ends, look for more: `always` (a queue: the freed slot takes the next item at
   * once), or only `if-saturated` (the last pass took as many items as it had room for, so more
   * may wait; the timer finds the rest).
   */
  refill: "always" | "if-saturated";
  /** Also looks for work on a timer, every this many ms. */
  pollMs?: number;
  heartbeat?: LeaseHeartbeat;
  /** A pass (claiming), an item's work or a heartbeat failed. */
  onError(error: unknown, where: "claim" | "work" | "heartbeat"): void;
}

/** A slot promised ahead of a claim (an item that will be held by other means); exactly one of the two is called. */
export interface Reservation<T> {
  /** Works on `item` in the reserved slot (not if the worker closed meanwhile: then the slot is just freed). */
  launch(item: T): void;
  /** Gives the slot back unused. */
  release(): void;
}

/** The shortest heartbeat, whatever the lease. */
const MIN_BEAT_MS = 250;

/** A heartbeat that renews a lease of `leaseMs` three times within it (at least every 250 ms). */
export function heartbeatEvery(leaseMs: number): number {
  return Math.max(MIN_BEAT_MS, Math.floor(leaseMs / 3));
}

/**
 * One loop for work that is claimed from storage under a lease: bounded concurrency, passes that
 * claim as many items as there are free slots (woken by `kick` — an in-process or PostgreSQL
 * notification — and by a timer), a heartbeat that holds the leases of the items in progress,
 * slots reserved ahead for items held by other means, and a drain with a deadline on shutdown.
 * Async runs, callback delivery and evaluations run on it; what an item is, how it is claimed
 * and what happens when its lease is lost is theirs.
 *
 * Passes never overlap: a kick during a pass runs one more pass after it. A pass starts on a later
 * turn of the event loop, never inside its caller's.
 */
export class LeasedWorker<T> {
  private readonly inflight = new Map<string, Promise<void>>();
  private reserved = 0;
  /** The last pass took as many items as it had room for: more may be waiting. */
  private saturated = false;
  private running = false;
  private again = false;
  private isClosed = false;
  private pass: Promise<void> = Promise.resolve();
  private poll: NodeJS.Timeout | null = null;
  private beat: NodeJS.Timeout | null = null;

  constructor(private readonly options: LeasedWorkerOptions<T>) {}

  /** Starts the timer and the heartbeat (each once), and looks for work (unless `kick` is false: the first `kick` does). */
  start(options: { kick?: boolean } = {}): void {
    const { pollMs, heartbeat } = this.options;
    if (pollMs !== undefined && !this.poll && !this.isClosed) {
      this.poll = setInterval(() => this.kick(), pollMs);
      this.poll.unref();
    }
    if (heartbeat && !this.beat) {
      this.beat = setInterval(() => void this.heartbeat(heartbeat), heartbeat.everyMs);
      this.beat.unref();
    }
    if (options.kick !== false) this.kick();
  }

  /** Looks for work soon. */
  kick(): void {
    if (this.isClosed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.pass = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.claimPass())
      .catch((error: unknown) => this.options.onError(error, "claim"))
      .finally(() => {
        this.running = false;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Claims no more items; those in progress go on (and the heartbeat keeps their leases). */
  close(): void {
    this.isClosed = true;
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
  }

  /** Closes, and stops the heartbeat. */
  stop(): void {
    this.close();
    if (this.beat) clearInterval(this.beat);
    this.beat = null;
  }

  /** Waits until no pass runs and no item is in progress, or `graceMs` passed; says whether it is idle. */
  async idle(graceMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), graceMs);
      timer.unref();
    });
    const settled = (async () => {
      while (this.running || this.inflight.size > 0) {
        await this.pass;
        await Promise.allSettled([...this.inflight.values()]);
      }
      return true as const;
    })();
    try {
      return await Promise.race([settled, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Stops claiming and waits up to `graceMs` for the items in progress — the heartbeat keeps their
   * leases meanwhile, so no other process takes over what still runs here — then stops the heartbeat.
   */
  async drain(graceMs: number): Promise<boolean> {
    this.close();
    try {
      return await this.idle(graceMs);
    } finally {
      this.stop();
    }
  }

  /** A slot for an item this process will hold by other means, or null when every slot is taken (or the worker closed). */
  reserve(): Reservation<T> | null {
    if (this.isClosed || this.inflight.size + this.reserved >= this.options.concurrency) return null;
    this.reserved++;
    let used = false;
    const use = () => {
      if (used) throw new Error("a reserved slot is used once");
      used = true;
      this.reserved--;
    };
    return {
      launch: (item) => {
        use();
        if (!this.isClosed) this.launch(item);
      },
      release: () => {
        use();
        if (this.saturated) this.kick();
      },
    };
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Items in progress, plus a pass claiming more. */
  get busy(): number {
    return this.inflight.size + (this.running ? 1 : 0);
  }

  /** Ids of the items in progress. */
  get held(): string[] {
    return [...this.inflight.keys()];
  }

  private free(): number {
    return this.options.concurrency - this.inflight.size - this.reserved;
  }

  private async claimPass(): Promise<void> {
    if (this.isClosed) return;
    let free = this.free();
    if (free <= 0) {
      this.saturated = true;
      return;
    }
    if (!this.options.oneAtATime) {
      const items = await this.options.claim(free);
      this.saturated = items.length >= free;
      for (const item of items) this.launch(item);
      return;
    }
    while (free > 0 && !this.isClosed) {
      const [item] = await this.options.claim(1);
      if (item === undefined) break;
      this.launch(item);
      free = this.free();
    }
    this.saturated = free <= 0;
  }

  private launch(item: T): void {
    const id = this.options.id(item);
    // Claimed again while it still runs here (its lease ran out during a storage outage, and this
    // process took it back): the claim renewed the lease of the work in progress; a second copy would
    // run it twice.
    if (this.inflight.has(id)) return;
    const work: Promise<void> = Promise.resolve()
      .then(() => this.options.work(item))
      .catch((error: unknown) => this.options.onError(error, "work"))
      .finally(() => {
        if (this.inflight.get(id) === work) this.inflight.delete(id);
        if (this.options.refill === "always" || this.saturated) this.kick();
      });
    this.inflight.set(id, work);
  }

  private async heartbeat(beat: LeaseHeartbeat): Promise<void> {
    try {
      const ids = beat.held ? beat.held() : this.held;
      if (ids.length > 0) {
        const still = await beat.renew(ids);
        if (still) {
          const held = new Set(still);
          for (const id of ids) if (!held.has(id)) beat.lost?.(id);
        }
      }
      await beat.then?.();
    } catch (error) {
      this.options.onError(error, "heartbeat");
    }
  }
}
