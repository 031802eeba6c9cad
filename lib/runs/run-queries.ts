import "server-only";
import { GenserveError } from "../errors";
import { mayRead } from "../keys/owner-access";
import type { Principal } from "../keys/api-keys";
import type { DeliveryAttempt, EventRecord, RunFilter, RunListBounds, RunListPage, RunRecord, Store, UsageQuery, UsageReport } from "../store/store-types";

/**
 * What the API reads about runs: a run the caller may read, pages of runs, a run's callback event
 * (and sending it again), and the usage report of finished runs.
 */
export class RunQueries {
  constructor(private readonly store: Store) {}

  /**
   * A run the caller may read (its own; any of its project for an admin or viewer key); another's run is a 404 exactly
   * like a missing one. `streamed` asks for a stream.object run.
   */
  async readable(caller: Principal, id: string, options: { streamed?: boolean } = {}): Promise<RunRecord> {
    const run = await this.store.runs.get(id);
    if (!run || !(await mayRead(this.store, caller, run.keyId)) || (options.streamed && run.operation !== "stream.object")) {
      throw new GenserveError("run_not_found", { detail: `No ${options.streamed ? "streamed run" : "run"} "${id}" exists for this key.` });
    }
    return run;
  }

  /** The run as stored now, whoever's it is (for a caller already allowed to read it). */
  latest(id: string): Promise<RunRecord | null> {
    return this.store.runs.get(id);
  }

  list(filter: RunFilter, bounds: RunListBounds): Promise<RunListPage> {
    return this.store.runs.list(filter, bounds);
  }

  /** The run's callback event with its delivery attempts; null for a run without one. */
  callbackEvent(runId: string): Promise<(EventRecord & { deliveries: DeliveryAttempt[] }) | null> {
    return this.store.events.forRun(runId);
  }

  /** Queues the run's callback event again (same webhook-id); not_found when it has none. */
  async redeliver(runId: string): Promise<{ eventId: string }> {
    const event = await this.store.events.forRun(runId);
    if (!event) throw new GenserveError("not_found", { detail: "This run has no callback event (it is still running, or it is a streamed run)." });
    await this.store.events.redeliver(event.id, new Date().toISOString());
    return { eventId: event.id };
  }

  usage(query: UsageQuery): Promise<UsageReport> {
    return this.store.usage.report(query);
  }
}
