import "server-only";
import { cappedWrite } from "./quotas";
import { run, type StoreRunner } from "./runner";
import type { InboxEvent, Store, StoredInboxEvent } from "./store-types";

/**
 * Built-in inboxes, written once for both backends. Anyone holding an inbox's URL may post to it
 * without a key, so what it keeps is bounded three ways — the newest `keep` deliveries, together at
 * most `maxBytes` (bodies and headers), none older than `maxAgeMs` — applied in the transaction that
 * stores each delivery; its reads come a page at a time.
 */
export function inboxStore(db: StoreRunner): Store["inboxes"] {
  return {
    async create(inbox, limit) {
      await cappedWrite(db, limit === undefined ? undefined : { resource: "inboxes", keyId: inbox.keyId, limit, at: inbox.createdAt }, {
        sql: "INSERT INTO inboxes (id, key_id, host, created_at) VALUES ($1, $2, $3, $4)",
        params: [inbox.id, inbox.keyId, inbox.host, inbox.createdAt],
      });
    },
    async get(id) {
      const [row] = await db.all<{ id: string; key_id: string; host: string; created_at: string }>("SELECT id, key_id, host, created_at FROM inboxes WHERE id = $1", [id]);
      return row ? { id: row.id, keyId: row.key_id, host: row.host, createdAt: row.created_at } : null;
    },
    async receive(id, event, bounds) {
      const headers = JSON.stringify(event.headers);
      const bytes = Buffer.byteLength(event.body) + Buffer.byteLength(headers);
      await db.transact(function* () {
        // 1/0: SQLite binds no booleans, and PostgreSQL reads '1' as true.
        yield* run("INSERT INTO inbox_events (inbox_id, received_at, headers, body, verified, bytes) VALUES ($1, $2, $3, $4, $5, $6)", [
          id,
          event.receivedAt,
          headers,
          event.body,
          event.verified ? 1 : 0,
          bytes,
        ]);
        // The newest delivery always stays (its body was already held to the inbox's limits).
        yield* run(
          `DELETE FROM inbox_events WHERE inbox_id = $1 AND (received_at < $2 OR seq IN (
             SELECT seq FROM (
               SELECT seq, ROW_NUMBER() OVER (ORDER BY seq DESC) AS n, SUM(bytes) OVER (ORDER BY seq DESC) AS total
               FROM inbox_events WHERE inbox_id = $1
             ) ranked WHERE n > 1 AND (n > $3 OR total > $4)))`,
          [id, new Date(Date.parse(event.receivedAt) - bounds.maxAgeMs).toISOString(), bounds.keep, bounds.maxBytes],
        );
      });
    },
    async events(id, page) {
      // Sizes first (no bodies), to know where the page ends; then the page's deliveries.
      const sizes = await db.all<{ seq: number | string; bytes: number | string }>(
        "SELECT seq, bytes FROM inbox_events WHERE inbox_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3",
        [id, page.before ?? Number.MAX_SAFE_INTEGER, page.limit + 1],
      );
      let taken = 0;
      let total = 0;
      for (const size of sizes.slice(0, page.limit)) {
        if (taken > 0 && total + Number(size.bytes) > page.maxBytes) break;
        total += Number(size.bytes);
        taken++;
      }
      if (taken === 0) return { events: [], next: null };
      const newest = Number(sizes[0]!.seq);
      const oldest = Number(sizes[taken - 1]!.seq);
      const rows = await db.all<{ seq: number | string; received_at: string; headers: string; body: string; verified: number | boolean }>(
        "SELECT seq, received_at, headers, body, verified FROM inbox_events WHERE inbox_id = $1 AND seq <= $2 AND seq >= $3 ORDER BY seq DESC",
        [id, newest, oldest],
      );
      return { events: rows.map(toEvent), next: taken < sizes.length ? oldest : null };
    },
  };
}

function toEvent(row: { seq: number | string; received_at: string; headers: string; body: string; verified: number | boolean }): StoredInboxEvent {
  const event: InboxEvent = { receivedAt: row.received_at, headers: JSON.parse(row.headers) as Record<string, string>, body: row.body, verified: row.verified === true || row.verified === 1 };
  return { seq: Number(row.seq), ...event };
}
