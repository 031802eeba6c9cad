import "server-only";
import { Worker, type ResourceLimits } from "node:worker_threads";
import { LRUCache } from "lru-cache";
import { GenserveError } from "../errors";

export interface WorkerPoolOptions {
  /** Worker threads: one slow job never holds up the others. */
  size: number;
  /** Heap limits for each worker; a worker that runs out is replaced and its job fails. */
  resourceLimits?: ResourceLimits;
  /** Sent to every new worker before its first job. */
  configure?: Record<string, unknown>;
}

export interface PoolStatus {
  size: number;
  busy: number;
  queued: number;
  /** Workers replaced because a job ran past its time limit or out of memory, since start. */
  replaced: number;
  /** Jobs running well past their limit that could not be stopped (should stay 0). */
  stuck: number;
}

export interface JobOptions {
  /** Who the job is for (an API key): waiting jobs are taken in turn per owner. */
  owner?: string;
  /** Stops waiting (the job is dropped if it has not started; its result is ignored if it has). */
  signal?: AbortSignal;
}

export interface PoolJob<S> extends JobOptions {
  /** The message for the worker; `state` is what this pool keeps about that worker (see `newState`). */
  message(state: S): Record<string, unknown>;
  timeoutMs: number;
  /** The error a job past its time limit fails with. */
  timedOut(): Error;
  /** The error a job fails with when its worker dies under it (`outOfMemory` when it hit `resourceLimits`). */
  crashed?(outOfMemory: boolean): Error;
  /** Called with the reply before the job resolves, to update the worker's state. */
  replied?(state: S, reply: Record<string, unknown>): void;
}

interface Running<S> {
  job: PoolJob<S>;
  id: number;
  startedAt: number;
  timer: NodeJS.Timeout | null;
  resolve(value: Record<string, unknown>): void;
  reject(error: unknown): void;
}

interface Slot<S> {
  worker: Worker | null;
  /** The worker has loaded its modules (it says so with a message of id 0): job clocks run from then. */
  ready: boolean;
  state: S;
  running: Running<S> | null;
}

type Waiting<S> = Omit<Running<S>, "id" | "startedAt" | "timer">;

let nextId = 1;

/**
 * A pool of worker threads for work that must not block the event loop or run without bounds:
 * every job has a hard time limit (counted from when its worker is ready: a worker file posts a
 * message of id 0 once its modules are loaded), past which its worker is terminated (V8 stops even a regex in
 * the middle of backtracking) and replaced; a worker that dies (out of memory under
 * `resourceLimits`) is replaced too. Waiting jobs are taken in turn per owner, so one caller's
 * backlog cannot starve the others. Workers start on first use and never keep the process alive.
 */
export class WorkerPool<S> {
  private readonly slots: Slot<S>[];
  private readonly waiting = new Map<string, Waiting<S>[]>();
  /** When each owner last had a job started (a counter), for taking owners in turn. */
  private readonly lastServed = new LRUCache<string, number>({ max: 10_000 });
  private served = 0;
  private replacedCount = 0;
  private closed = false;

  constructor(
    private readonly file: string,
    private readonly options: WorkerPoolOptions,
    private readonly newState: () => S,
  ) {
    this.slots = Array.from({ length: Math.max(1, options.size) }, () => ({ worker: null, ready: false, state: newState(), running: null }));
  }

  run(job: PoolJob<S>): Promise<Record<string, unknown>> {
    if (this.closed) return Promise.reject(shuttingDown());
    if (job.signal?.aborted) return Promise.reject(job.signal.reason);
    return new Promise((resolve, reject) => {
      const waiting: Waiting<S> = { job, resolve, reject };
      job.signal?.addEventListener("abort", () => this.abandon(waiting), { once: true });
      const owner = job.owner ?? "";
      const list = this.waiting.get(owner);
      if (list) list.push(waiting);
      else this.waiting.set(owner, [waiting]);
      this.dispatch();
    });
  }

  status(): PoolStatus {
    const now = Date.now();
    let queued = 0;
    for (const list of this.waiting.values()) queued += list.length;
    return {
      size: this.slots.length,
      busy: this.slots.filter((s) => s.running).length,
      queued,
      replaced: this.replacedCount,
      stuck: this.slots.filter((s) => s.running?.timer && now - s.running.startedAt > s.running.job.timeoutMs + 5_000).length,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const list of this.waiting.values()) for (const w of list) w.reject(shuttingDown());
    this.waiting.clear();
    await Promise.all(
      this.slots.map(async (slot) => {
        const worker = slot.worker;
        slot.worker = null;
        this.settle(slot)?.reject(shuttingDown());
        await worker?.terminate();
      }),
    );
  }

  /** A job whose caller gave up: dropped if waiting; if running, it finishes (bounded) and is ignored. */
  private abandon(waiting: Waiting<S>): void {
    const owner = waiting.job.owner ?? "";
    const list = this.waiting.get(owner);
    const i = list?.indexOf(waiting) ?? -1;
    if (i >= 0) {
      list!.splice(i, 1);
      if (list!.length === 0) this.waiting.delete(owner);
    }
    waiting.reject(waiting.job.signal!.reason);
  }

  /** The next job: the oldest of the waiting owner served longest ago (or never). */
  private next(): Waiting<S> | undefined {
    let chosen: string | undefined;
    let oldest = Infinity;
    for (const owner of this.waiting.keys()) {
      const at = this.lastServed.get(owner) ?? -1;
      if (at < oldest) {
        oldest = at;
        chosen = owner;
      }
    }
    if (chosen === undefined) return undefined;
    const list = this.waiting.get(chosen)!;
    const found = list.shift()!;
    if (list.length === 0) this.waiting.delete(chosen);
    return found;
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.running) continue;
      const waiting = this.next();
      if (!waiting) return;
      this.start(slot, waiting);
    }
  }

  private start(slot: Slot<S>, waiting: Waiting<S>): void {
    const { job } = waiting;
    this.lastServed.set(job.owner ?? "", this.served++);
    const worker = this.ensure(slot);
    const running: Running<S> = { ...waiting, id: nextId++, startedAt: Date.now(), timer: null };
    slot.running = running;
    worker.postMessage({ id: running.id, ...job.message(slot.state) });
    // A worker that is still starting (loading its modules) does not spend the job's time.
    if (slot.ready) this.startClock(slot, running);
  }

  private startClock(slot: Slot<S>, running: Running<S>): void {
    running.startedAt = Date.now();
    running.timer = setTimeout(() => this.timeOut(slot, running.job), running.job.timeoutMs);
    running.timer.unref();
  }

  private timeOut(slot: Slot<S>, job: PoolJob<S>): void {
    if (slot.running?.job !== job) return;
    const running = this.settle(slot)!;
    this.replace(slot);
    running.reject(job.timedOut());
    this.dispatch();
  }

  private replace(slot: Slot<S>): void {
    this.replacedCount++;
    const worker = slot.worker;
    slot.worker = null;
    slot.state = this.newState();
    void worker?.terminate();
  }

  /** Clears the slot's running job and returns it. */
  private settle(slot: Slot<S>): Running<S> | null {
    const running = slot.running;
    if (running?.timer) clearTimeout(running.timer);
    slot.running = null;
    return running;
  }

  private ensure(slot: Slot<S>): Worker {
    if (slot.worker) return slot.worker;
    const worker = new Worker(this.file, { resourceLimits: this.options.resourceLimits });
    worker.unref();
    slot.ready = false;
    if (this.options.configure) worker.postMessage({ id: 0, ...this.options.configure });
    worker.on("message", (reply: { id: number; failure?: string } & Record<string, unknown>) => {
      if (slot.worker !== worker) return;
      if (reply.id === 0) {
        // The worker is up: a job waiting for it starts its clock now.
        slot.ready = true;
        if (slot.running && !slot.running.timer) this.startClock(slot, slot.running);
        return;
      }
      if (slot.running?.id !== reply.id) return;
      const running = this.settle(slot)!;
      const { id: _id, failure, ...result } = reply;
      if (failure !== undefined) running.reject(new GenserveError("internal", { detail: "A worker job failed unexpectedly." }));
      else {
        running.job.replied?.(slot.state, result);
        running.resolve(result);
      }
      this.dispatch();
    });
    const died = (error?: Error & { code?: string }) => {
      if (slot.worker !== worker) return;
      const running = this.settle(slot);
      this.replace(slot);
      const outOfMemory = error?.code === "ERR_WORKER_OUT_OF_MEMORY";
      running?.reject(running.job.crashed?.(outOfMemory) ?? new GenserveError("internal", { detail: "A worker stopped during the job; retry the request." }));
      this.dispatch();
    };
    worker.on("error", died);
    worker.on("exit", () => died());
    slot.worker = worker;
    return worker;
  }
}

const shuttingDown = () => new GenserveError("service_unavailable", { detail: "The server is shutting down." });
