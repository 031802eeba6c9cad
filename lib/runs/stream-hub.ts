import "server-only";
import type { GroundedLeaf } from "../domain/grounding";
import type { RunMetadata } from "../domain/run-vocabulary";
import type { ProblemBody } from "../errors";
import type { Store, StoredStreamEvent } from "../store/store-types";

/** One event of a streamed run. `seq` counts every event of the run from 1 (the SSE `id:`). */
export type StreamEvent =
  | { seq: number; kind: "item"; text: string }
  | { seq: number; kind: "restart"; attempt: number }
  | { seq: number; kind: "field"; attempt: number; pointer: string; value: unknown; valid: boolean | null }
  | { seq: number; kind: "done"; payload: { runId: string; object: unknown; metadata: RunMetadata; grounding?: GroundedLeaf[] } }
  | { seq: number; kind: "error"; problem: ProblemBody };

type Body<E> = E extends StreamEvent ? Omit<E, "seq"> : never;
export type NewStreamEvent = Body<StreamEvent>;

const isFinal = (event: { kind: string }) => event.kind === "done" || event.kind === "error";

interface RunStream {
  keyId: string;
  events: StreamEvent[];
  ended: boolean;
  endedAt: number;
  wake: Set<() => void>;
}

/** Sharing streams through the store (PostgreSQL), so a client may resume on any process. */
export interface SharedStreams {
  store: Store;
  /** Events are written in batches gathered over this long (a final event at once). */
  flushMs: number;
  /** How often a follower looks at the run's status when no event came (its process may have died). */
  pollMs?: number;
  log(message: string, fields: Record<string, unknown>): void;
}

const PAGE = 256;
/** A batch that cannot be written is tried again this often, this many times. */
const RETRY_MS = 1_000;
const RETRIES = 30;

/**
 * Keeps each streamed run's events while it runs and for `retainMs` after it ends, so a client
 * that lost its connection can resume from its Last-Event-ID and lose nothing. The process running
 * the stream serves it from memory. With `shared` storage, events are also written to the store in
 * small batches, and announced there, so that a client reconnecting to another process (a replica
 * behind the same load balancer) gets the rest of the stream and its final event.
 */
export class StreamHub {
  private readonly runs = new Map<string, RunStream>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly retainMs: number;
  private readonly now: () => number;
  private readonly shared: SharedStreams | undefined;
  /** Followers of runs streamed by other processes, woken when the store announces an append. */
  private readonly remoteWaiters = new Map<string, Set<() => void>>();
  private listener: { close(): Promise<void> } | null = null;

  constructor(options: { retainMs: number; now?: () => number; shared?: SharedStreams }) {
    this.retainMs = options.retainMs;
    this.now = options.now ?? Date.now;
    this.shared = options.shared;
    this.sweeper = setInterval(() => void this.sweep(), Math.min(60_000, Math.max(1_000, this.retainMs / 4)));
    this.sweeper.unref();
  }

  /** Starts listening for other processes' appends (shared storage only). */
  async start(): Promise<void> {
    if (!this.shared || this.listener) return;
    this.listener = await this.shared.store.streams.listen(
      (runId) => this.wakeRemote(runId),
      () => {
        for (const runId of this.remoteWaiters.keys()) this.wakeRemote(runId);
      },
    );
  }

  open(runId: string, keyId: string): { push(event: NewStreamEvent): void; end(): void } {
    const stream: RunStream = { keyId, events: [], ended: false, endedAt: 0, wake: new Set() };
    this.runs.set(runId, stream);
    const mirror = this.shared ? new Mirror(runId, this.shared, this.now) : null;
    const notify = () => {
      for (const wake of stream.wake) wake();
      stream.wake.clear();
    };
    const finish = () => {
      stream.ended = true;
      stream.endedAt = this.now();
    };
    return {
      push: (event) => {
        if (stream.ended) return;
        const numbered = { ...event, seq: stream.events.length + 1 } as StreamEvent;
        stream.events.push(numbered);
        mirror?.push(numbered);
        if (isFinal(event)) finish();
        notify();
      },
      end: () => {
        if (!stream.ended) finish();
        notify();
      },
    };
  }

  /** Whether this process streams (or recently streamed) the run itself. */
  holds(runId: string): boolean {
    return this.runs.has(runId);
  }

  /** Whether a stream of a run held elsewhere can be followed from here (through shared storage). */
  get followsOthers(): boolean {
    return this.shared !== undefined;
  }

  /** The run's owner, or null when this process holds no stream for it (any more). */
  owner(runId: string): string | null {
    return this.runs.get(runId)?.keyId ?? null;
  }

  /**
   * Events after `afterSeq`, then live ones until the run's final event; ends early on `signal`.
   * A run streamed by another process is followed through shared storage; that ends without a
   * final event when the run is no longer running and no final event was stored (its process died
   * and the run was reconciled): the caller then ends the stream from the run's record.
   */
  async *follow(runId: string, afterSeq: number, signal?: AbortSignal): AsyncGenerator<StreamEvent> {
    for await (const batch of this.followBatches(runId, afterSeq, signal)) yield* batch;
  }

  /**
   * As `follow`, in batches: every event already there at once. A follower woken by a new event
   * first lets the rest of this turn of the event loop add theirs (setImmediate: well under a
   * millisecond, so the first item is not held back), so that a model faster than its client costs
   * one write per batch rather than one per event.
   */
  async *followBatches(runId: string, afterSeq: number, signal?: AbortSignal): AsyncGenerator<StreamEvent[]> {
    const stream = this.runs.get(runId);
    if (!stream) {
      if (this.shared) for await (const event of this.followShared(runId, afterSeq, this.shared, signal)) yield [event];
      return;
    }
    // One abort listener for the whole follow (not one per wait: a long stream waits thousands of times).
    let wake: (() => void) | null = null;
    const aborted = () => wake?.();
    signal?.addEventListener("abort", aborted, { once: true });
    try {
      let next = afterSeq;
      for (;;) {
        if (next < stream.events.length) {
          const batch = stream.events.slice(next);
          next = stream.events.length;
          yield batch;
          continue;
        }
        if (stream.ended || signal?.aborted) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
          stream.wake.add(resolve);
        });
        wake = null;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } finally {
      signal?.removeEventListener("abort", aborted);
    }
  }

  private async *followShared(runId: string, afterSeq: number, shared: SharedStreams, signal?: AbortSignal): AsyncGenerator<StreamEvent> {
    let next = afterSeq;
    let lastLook = false;
    let looked = false;
    const ended = async () => {
      const run = await shared.store.runs.get(runId);
      return !run || (run.status !== "running" && run.status !== "queued");
    };
    for (;;) {
      // Waiting starts before reading, so an append announced between the two is not missed.
      const wait = this.waitRemote(runId, shared.pollMs ?? 2_000, signal);
      let rows: StoredStreamEvent[];
      try {
        rows = await shared.store.streams.after(runId, next, PAGE);
      } catch (error) {
        wait.cancel();
        throw error;
      }
      for (const row of rows) {
        const event = { ...(JSON.parse(row.event) as NewStreamEvent), seq: row.seq } as StreamEvent;
        next = row.seq;
        yield event;
        if (row.final) {
          wait.cancel();
          return;
        }
      }
      if (rows.length === PAGE) {
        wait.cancel();
        continue;
      }
      if (lastLook || signal?.aborted) {
        wait.cancel();
        return;
      }
      // Nothing new at first, or for a while: if the run has ended without a stored final event,
      // one more read (the final batch may have just landed), then the caller ends the stream from
      // the run's record.
      if (!looked && rows.length === 0) {
        looked = true;
        if (await ended()) {
          wait.cancel();
          lastLook = true;
          continue;
        }
      }
      if ((await wait.promise) === "timeout" && (await ended())) lastLook = true;
    }
  }

  private waitRemote(runId: string, timeoutMs: number, signal?: AbortSignal): { promise: Promise<"appended" | "timeout" | "aborted">; cancel(): void } {
    let done: (why: "appended" | "timeout" | "aborted") => void = () => undefined;
    const promise = new Promise<"appended" | "timeout" | "aborted">((resolve) => (done = resolve));
    const waiters = this.remoteWaiters.get(runId) ?? new Set();
    this.remoteWaiters.set(runId, waiters);
    const wake = () => settle("appended");
    const onAbort = () => settle("aborted");
    const timer = setTimeout(() => settle("timeout"), timeoutMs);
    function settle(why: "appended" | "timeout" | "aborted") {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      waiters.delete(wake);
      done(why);
    }
    waiters.add(wake);
    signal?.addEventListener("abort", onAbort, { once: true });
    const cleanup = () => {
      if (waiters.size === 0 && this.remoteWaiters.get(runId) === waiters) this.remoteWaiters.delete(runId);
    };
    void promise.then(cleanup);
    return { promise, cancel: () => settle("aborted") };
  }

  private wakeRemote(runId: string): void {
    for (const wake of [...(this.remoteWaiters.get(runId) ?? [])]) wake();
  }

  async sweep(): Promise<void> {
    const cutoff = this.now() - this.retainMs;
    for (const [runId, stream] of this.runs) if (stream.ended && stream.endedAt <= cutoff) this.runs.delete(runId);
    if (this.shared) {
      // Streams whose process died never stored a final event: gone a day after retention.
      await this.shared.store.streams
        .sweep(new Date(cutoff).toISOString(), new Date(cutoff - 86_400_000).toISOString())
        .catch((error: unknown) => this.shared?.log("could not sweep shared stream events", { err: { message: (error as Error).message } }));
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await this.listener?.close();
    this.listener = null;
  }
}

/**
 * Writes one run's events to shared storage: gathered for `flushMs` (the final event at once),
 * one batch in flight at a time so they land in order; a batch that fails (the database is away)
 * is tried again, in order, before anything after it.
 */
class Mirror {
  private pending: StoredStreamEvent[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing = false;
  private failures = 0;

  constructor(
    private readonly runId: string,
    private readonly shared: SharedStreams,
    private readonly now: () => number,
  ) {}

  push(event: StreamEvent): void {
    const { seq, ...body } = event;
    this.pending.push({ seq, event: JSON.stringify(body), final: isFinal(event) });
    if (isFinal(event)) this.schedule(0);
    else this.schedule(this.shared.flushMs);
  }

  private schedule(delayMs: number): void {
    if (this.writing) return;
    if (this.timer && delayMs > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.flush(), delayMs);
  }

  private async flush(): Promise<void> {
    this.timer = null;
    if (this.writing || this.pending.length === 0) return;
    this.writing = true;
    const batch = this.pending;
    this.pending = [];
    try {
      await this.shared.store.streams.append(this.runId, batch, new Date(this.now()).toISOString());
      this.failures = 0;
    } catch (error) {
      this.failures++;
      if (this.failures > RETRIES) {
        this.shared.log("gave up sharing a stream's events: followers on other processes end it from the run's record", { runId: this.runId, err: { message: (error as Error).message } });
        this.writing = false;
        return;
      }
      this.pending = [...batch, ...this.pending];
      this.writing = false;
      this.schedule(RETRY_MS);
      return;
    }
    this.writing = false;
    if (this.pending.length > 0) this.schedule(this.pending.some((e) => e.final) ? 0 : this.shared.flushMs);
  }
}
