import "server-only";
import { createHash } from "node:crypto";
import { TRANSFER_TABLES, type TransferTable } from "./migrations";
import type { TransferRow } from "./store-types";

/** Each transferred table's primary key: rows are read in its order, a page at a time. */
const KEYS: Record<TransferTable, readonly string[]> = {
  users: ["id"],
  user_identities: ["issuer", "subject"],
  projects: ["id"],
  api_keys: ["id"],
  invites: ["id"],
  catalog_versions: ["project_id", "kind", "slug", "version"],
  threads: ["key_id", "id"],
  thread_messages: ["seq"],
  runs: ["id"],
  events: ["id"],
  deliveries: ["seq"],
  inboxes: ["id"],
  inbox_events: ["seq"],
  idempotency_keys: ["key_id", "idempotency_key"],
  key_usage: ["key_id", "meter"],
  usage_reservations: ["run_id", "meter"],
  suites: ["slug"],
  suite_snapshots: ["id"],
  evaluations: ["id"],
  evaluation_items: ["seq"],
  workflow_label_moves: ["seq"],
  shares: ["id"],
  audit_events: ["seq"],
};

const PAGE = 500;

/**
 * Every row of `table` in primary-key order, read in pages by key (not by offset, so a large table
 * costs one index range scan per page). `query` runs SQL with `?` placeholders on the backend.
 */
export async function* pagedRows(table: TransferTable, query: (sql: string, params: unknown[]) => Promise<TransferRow[]>): AsyncGenerator<TransferRow> {
  const key = KEYS[table];
  const columns = key.join(", ");
  let after: unknown[] | null = null;
  for (;;) {
    const where: string = after ? `WHERE (${columns}) > (${key.map(() => "?").join(", ")})` : "";
    const rows: TransferRow[] = await query(`SELECT * FROM ${table} ${where} ORDER BY ${columns} LIMIT ${PAGE}`, after ?? []);
    for (const row of rows) yield row;
    if (rows.length < PAGE) return;
    const last = rows.at(-1)!;
    after = key.map((c) => last[c]);
  }
}

/** Refuses a table this version does not know, or a column its table lacks (an export from a newer version). */
export function checkTransferRow(table: string, row: TransferRow, columns: (table: TransferTable) => ReadonlySet<string>): asserts table is TransferTable {
  if (!(TRANSFER_TABLES as readonly string[]).includes(table)) throw new Error(`unknown table "${table}" in the export`);
  const known = columns(table as TransferTable);
  for (const column of Object.keys(row)) {
    if (!known.has(column)) throw new Error(`column "${column}" of table "${table}" is not known to this version of genserve (was the export made by a newer one?)`);
  }
}

/**
 * An export made before migration 19 as this version stores it: each evaluation's own copy of its
 * suite becomes one `suite_snapshots` row per distinct suite, version and document — named, as the
 * migration names it, after the first evaluation that held it (exports list evaluations by id) —
 * and the evaluation points at it. The default project is the target's own. Other rows pass through unchanged.
 */
export async function* upgradedRows(rows: AsyncIterable<{ table: TransferTable; row: TransferRow }>): AsyncGenerator<{ table: TransferTable; row: TransferRow }> {
  // By a digest of slug, version and document: an export of large suites is not held in memory.
  const snapshots = new Map<string, string>();
  for await (const entry of rows) {
    // Every store has the default project from its migrations (25): the export's is that one.
    if (entry.table === "projects" && entry.row.id === "prj_default") continue;
    // An export from before roles (migration 25): an admin key stays an admin, the others are editors.
    if (entry.table === "api_keys" && !("role" in entry.row)) {
      const admin = entry.row.admin === true || entry.row.admin === 1 || entry.row.admin === "1" || entry.row.admin === "true";
      yield { table: entry.table, row: { ...entry.row, role: admin ? "admin" : "editor" } };
      continue;
    }
    if (entry.table !== "evaluations" || !("document" in entry.row) || "snapshot_id" in entry.row) {
      yield entry;
      continue;
    }
    const { document, ...row } = entry.row;
    const digest = createHash("sha256").update(`${String(row.suite_slug)}\u0000${String(row.suite_version)}\u0000${String(document)}`).digest("hex");
    let id = snapshots.get(digest);
    if (id === undefined) {
      id = `snap_${String(row.id)}`;
      snapshots.set(digest, id);
      yield { table: "suite_snapshots", row: { id, suite_slug: row.suite_slug!, suite_version: row.suite_version!, document: document!, created_at: row.created_at! } };
    }
    yield { table: "evaluations", row: { ...row, snapshot_id: id, claimed_at: row.started_at ?? null } };
  }
}

export class ImportTargetNotEmpty extends Error {
  constructor() {
    super("the target store already holds keys or runs; import into an empty one (a new data directory or database)");
  }
}
