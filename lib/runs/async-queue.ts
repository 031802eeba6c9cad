import "server-only";
import type { Logger } from "pino";
import type { Lease, RunRecord, Store } from "../store/store-types";
import { LeasedWorker, type LeaseHeartbeat } from "../workers/leased-worker";

export interface AsyncQueueDeps {
  store: Store;
  logger: Logger;
  /** Queued runs executed at once (`limits.asyncConcurrency`). */
  concurrency: number;
  now: () => Date;
  /** The lease a claimed run is taken under (the service renews it while the run executes). */
  lease(): Lease;
  /** Executes one claimed run to its end (the service plans, runs and records it). */
  execute(run: RunRecord & { request: unknown }): Promise<void>;
  /** The run service's heartbeat (the leases of every run executing here, not only queued ones); it beats from `start` to `stop`. */
  heartbeat: LeaseHeartbeat;
}

/**
 * Asynchronous runs (`Prefer: respond-async`) wait in storage as `queued`; a bounded pool of
 * workers claims them oldest first, one claim at a time, and hands each to the service; a slot
 * that frees takes the next at once. Queued runs survive a restart.
 */
export class AsyncQueue {
  private readonly worker: LeasedWorker<RunRecord & { request: unknown }>;

  constructor(deps: AsyncQueueDeps) {
    this.worker = new LeasedWorker({
      concurrency: deps.concurrency,
      oneAtATime: true,
      refill: "always",
      id: (run) => run.id,
      claim: async () => {
        const run = await deps.store.runs.claimQueued(deps.now().toISOString(), deps.lease());
        return run ? [run] : [];
      },
      work: (run) => deps.execute(run),
      heartbeat: deps.heartbeat,
      onError: (error, where) => {
        const err = { message: (error as Error).message };
        if (where === "heartbeat") deps.logger.warn({ err }, "run heartbeat failed; will retry");
        else deps.logger.error({ err }, "async run worker failed");
      },
    });
  }

  /** Starts the heartbeat, and workers for queued runs (unless closed). */
  start(): void {
    this.worker.start();
  }

  /** Starts workers for queued runs, up to the concurrency. */
  kick(): void {
    this.worker.kick();
  }

  /** Claims no more runs; workers finish the run they hold, and the heartbeat goes on. */
  close(): void {
    this.worker.close();
  }

  /** Closes, and stops the heartbeat. */
  stop(): void {
    this.worker.stop();
  }

  /** Waits until no worker is busy, or `ms` passed. */
  async idle(ms: number): Promise<void> {
    await this.worker.idle(ms);
  }

  /** Workers busy, a run claimed or being executed. */
  get busy(): number {
    return this.worker.busy;
  }
}
