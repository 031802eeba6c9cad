import "server-only";
import { TRANSFER_TABLES, type TransferTable } from "./migrations";
import type { TransferRow } from "./types";

/** Each transferred table's primary key: rows are read in its order, a page at a time. */
const KEYS: Record<TransferTable, readonly string[]> = {
  api_keys: ["id"],
  catalog_versions: ["kind", "slug", "version"],
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
  evaluations: ["id"],
  evaluation_items: ["seq"],
  workflow_label_moves: ["seq"],
  shares: ["id"],
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

export class ImportTargetNotEmpty extends Error {
  constructor() {
    super("the target store already holds keys or runs; import into an empty one (a new data directory or database)");
  }
}
