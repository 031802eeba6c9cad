import "server-only";
import type { Logger } from "pino";
import type { Lease, RunRecord, Store } from "../store/types";

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
}

/**
 * Asynchronous runs (`Prefer: respond-async`) wait in storage as `queued`; a bounded pool of
 * workers claims them oldest first and hands each to the service. Queued runs survive a restart.
 */
export class AsyncQueue {
  private workers = 0;
  private closed = false;

  constructor(private readonly deps: AsyncQueueDeps) {}

  /** Starts workers for queued runs, up to the concurrency. */
  kick(): void {
    while (!this.closed && this.workers < this.deps.concurrency) {
      this.workers++;
      void this.work()
        .catch((error: unknown) => this.deps.logger.error({ err: { message: (error as Error).message } }, "async run worker failed"))
        .finally(() => this.workers--);
    }
  }

  /** Claims no more runs; workers finish the run they hold. */
  close(): void {
    this.closed = true;
  }

  /** Workers busy, a run claimed or being executed. */
  get busy(): number {
    return this.workers;
  }

  private async work(): Promise<void> {
    while (!this.closed) {
      const run = await this.deps.store.runs.claimQueued(this.deps.now().toISOString(), this.deps.lease());
      if (!run) return;
      await this.deps.execute(run);
    }
  }
}
