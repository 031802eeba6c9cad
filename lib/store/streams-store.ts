import "server-only";
import type { StoreRunner } from "./runner";
import type { Store } from "./store-types";

/**
 * Streamed runs' events: reading and sweeping, written once for both backends. Appending and
 * listening are the backends' own (sqlite.ts: the group commit and in-process listeners; postgres.ts:
 * one statement that also NOTIFYs, and LISTEN on a connection of its own).
 */
export function streamReads(db: StoreRunner): Pick<Store["streams"], "after" | "sweep"> {
  return {
    async after(runId, afterSeq, limit) {
      const rows = await db.all<{ seq: number; event: string; final: number | boolean }>("SELECT seq, event, final FROM stream_events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3", [
        runId,
        afterSeq,
        limit,
      ]);
      return rows.map((r) => ({ seq: r.seq, event: r.event, final: r.final === 1 || r.final === true }));
    },
    async sweep(endedBefore, orphanedBefore) {
      await db.run("DELETE FROM stream_events WHERE run_id IN (SELECT run_id FROM stream_events WHERE final = 1 AND created_at < $1) OR created_at < $2", [endedBefore, orphanedBefore]);
    },
  };
}
