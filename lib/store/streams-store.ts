import "server-only";
import type { StoreRunner } from "./runner";
import type { Store } from "./store-types";

/** The channel appends to streamed runs are announced on (the payload is the run id). */
const STREAM_CHANNEL = "genserve_streams";

/**
 * Streamed runs' events, written once for both backends. A batch is appended in one statement that
 * joins SQLite's group commit and announces the run to every process (`StoreRunner.write`: on
 * PostgreSQL the NOTIFY is part of the statement, so it goes out exactly when the batch commits).
 */
export function streamsStore(db: StoreRunner): Store["streams"] {
  const batch = db.dialect.rowsOf("$2", "x", { seq: "int", event: "text", final: "int" });
  return {
    async append(runId, events, at) {
      if (events.length === 0) return;
      await db.write(
        `INSERT INTO stream_events (run_id, seq, event, final, created_at) SELECT $1, x.seq, x.event, x.final, $3 FROM ${batch}`,
        [runId, db.dialect.rows(events.map((e) => ({ seq: e.seq, event: e.event, final: e.final ? 1 : 0 }))), at],
        { grouped: true, announce: { channel: STREAM_CHANNEL, payload: runId } },
      );
    },
    async listen(onAppended, onReconnect) {
      return db.listen(STREAM_CHANNEL, onAppended, onReconnect);
    },
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
