import "server-only";
import { toRun, toStranded, type RunRow } from "./rows";
import { listRuns } from "./run-list";
import { runWrites } from "./run-writes";
import type { StoreRunner } from "./runner";
import type { Store } from "./store-types";

/**
 * Runs, written once for both backends: reads, leases and cancel checks here (a stranded run is
 * claimed in one statement: `SKIP LOCKED` on PostgreSQL, SQLite's one writer otherwise), and what
 * every run writes in run-writes.ts.
 */
export function runsStore(db: StoreRunner): Store["runs"] {
  return { ...runReads(db), ...runWrites(db) };
}

function runReads(db: StoreRunner): Pick<Store["runs"], "get" | "list" | "renewLeases" | "claimStranded" | "queuedCount" | "cancelRequested"> {
  const { inList, list, position, skipLocked } = db.dialect;
  return {
    async get(id) {
      const [row] = await db.all<RunRow>("SELECT * FROM runs WHERE id = $1", [id]);
      return row ? toRun(row) : null;
    },
    async list(filter, bounds) {
      return listRuns(db, position, filter, bounds);
    },
    async renewLeases(owner, ids, until) {
      if (ids.length === 0) return;
      await db.run(`UPDATE runs SET lease_until = $1 WHERE ${inList("id", "$2")} AND lease_owner = $3 AND status = 'running'`, [until, list(ids), owner]);
    },
    async claimStranded(now, lease, limit) {
      const rows = await db.all<RunRow>(
        `UPDATE runs SET lease_owner = $2, lease_until = $3
         WHERE id IN (SELECT id FROM runs WHERE status = 'running' AND (lease_until IS NULL OR lease_until < $1)
                      ORDER BY id LIMIT $4${skipLocked})
         RETURNING *`,
        [now, lease.owner, lease.until, limit],
      );
      return rows.sort((a, b) => (a.id < b.id ? -1 : 1)).map(toStranded);
    },
    async queuedCount(keyId, atMost) {
      const [row] = await db.all<{ n: number | string }>("SELECT COUNT(*) AS n FROM (SELECT 1 FROM runs WHERE status = 'queued' AND key_id = $1 LIMIT $2) q", [keyId, atMost]);
      return Number(row?.n ?? 0);
    },
    async cancelRequested(ids) {
      if (ids.length === 0) return [];
      return (await db.all<{ id: string }>(`SELECT id FROM runs WHERE ${inList("id", "$1")} AND status = 'running' AND cancel_requested_at IS NOT NULL`, [list(ids)])).map((r) => r.id);
    },
  };
}
