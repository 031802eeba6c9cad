import "server-only";
import type { StoreRunner } from "./runner";
import type { Store } from "./store-types";

/** Whether the database answers, and the backlog of work, written once for both backends. */
export function storeHealth(db: StoreRunner): Pick<Store, "ping" | "stats"> {
  return {
    async ping() {
      await db.all("SELECT 1", []);
    },
    async stats() {
      const [row] = await db.all<{ pending_events: number | string; queued_runs: number | string }>(
        "SELECT (SELECT COUNT(*) FROM events WHERE status = 'pending') AS pending_events, (SELECT COUNT(*) FROM runs WHERE status = 'queued') AS queued_runs",
        [],
      );
      return { pendingEvents: Number(row!.pending_events), queuedRuns: Number(row!.queued_runs) };
    },
  };
}
