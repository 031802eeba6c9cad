import "server-only";
import { toEvent, type EventRow } from "./rows";
import { all, run, type StoreRunner } from "./runner";
import type { Store } from "./store-types";

interface DeliveryRow {
  attempted_at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  next_attempt_at: string | null;
}

/**
 * Callback events and their delivery attempts, written once for both backends. Claims take due
 * events nobody holds under a lease, in one statement (`SKIP LOCKED` on PostgreSQL, SQLite's one
 * writer otherwise); the writes each delivery makes share SQLite's group commit.
 */
export function eventsStore(db: StoreRunner): Store["events"] {
  const { skipLocked, same } = db.dialect;
  return {
    async due(now, limit) {
      return (await db.all<EventRow>("SELECT * FROM events WHERE status = 'pending' AND next_attempt_at <= $1 ORDER BY next_attempt_at, id LIMIT $2", [now, limit])).map(toEvent);
    },
    async releaseLeases() {
      await db.run("UPDATE events SET lease_until = NULL WHERE lease_until IS NOT NULL", []);
    },
    async claimDue(now, limit, lease) {
      const rows = await db.transact(
        function* () {
          return yield* all<EventRow>(
            `UPDATE events SET lease_until = $3
             WHERE id IN (SELECT id FROM events WHERE status = 'pending' AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until < $1)
                          ORDER BY next_attempt_at, id LIMIT $2${skipLocked})
             RETURNING *`,
            [now, limit, lease.until],
          );
        },
        { grouped: true },
      );
      return rows.sort((a, b) => ((a.next_attempt_at ?? "") < (b.next_attempt_at ?? "") ? -1 : (a.next_attempt_at ?? "") > (b.next_attempt_at ?? "") ? 1 : a.id < b.id ? -1 : 1)).map(toEvent);
    },
    async forRun(runId) {
      const [row] = await db.all<EventRow>("SELECT * FROM events WHERE run_id = $1 ORDER BY created_at LIMIT 1", [runId]);
      if (!row) return null;
      const deliveries = await db.all<DeliveryRow>("SELECT attempted_at, status_code, error, duration_ms, next_attempt_at FROM deliveries WHERE event_id = $1 ORDER BY seq", [row.id]);
      return {
        ...toEvent(row),
        deliveries: deliveries.map((d) => ({ attemptedAt: d.attempted_at, statusCode: d.status_code, error: d.error, durationMs: d.duration_ms, nextAttemptAt: d.next_attempt_at })),
      };
    },
    async recordAttempt(eventId, attempt, status, heldUntil) {
      await db.transact(
        function* () {
          yield* run("INSERT INTO deliveries (event_id, attempted_at, status_code, error, duration_ms, next_attempt_at) VALUES ($1, $2, $3, $4, $5, $6)", [
            eventId,
            attempt.attemptedAt,
            attempt.statusCode,
            attempt.error,
            attempt.durationMs,
            attempt.nextAttemptAt,
          ]);
          // The attempt is counted either way; the event moves on only under the lease it was made under.
          const held = same("lease_until", "CAST($5 AS TEXT)");
          yield* run(
            `UPDATE events SET attempts = attempts + 1, updated_at = $3,
               status = CASE WHEN ${held} THEN $1 ELSE status END,
               next_attempt_at = CASE WHEN ${held} THEN $2 ELSE next_attempt_at END,
               lease_until = CASE WHEN ${held} THEN NULL ELSE lease_until END
             WHERE id = $4`,
            [status, attempt.nextAttemptAt, attempt.attemptedAt, eventId, heldUntil],
          );
        },
        { grouped: true },
      );
    },
    async redeliver(eventId, at) {
      await db.run("UPDATE events SET status = 'pending', next_attempt_at = $1, lease_until = NULL, updated_at = $1 WHERE id = $2", [at, eventId]);
    },
  };
}
