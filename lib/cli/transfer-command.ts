import "server-only";
import { createReadStream, createWriteStream } from "node:fs";
import { once } from "node:events";
import readline from "node:readline";
import type { Writable } from "node:stream";
import { MIGRATIONS, TRANSFER_TABLES } from "../store/migrations";
import type { TransferRow, TransferTable } from "../store/store-types";
import { describeStore } from "../store/open";
import { fail, loadConfigOrExit, openStore, storeLocation, type StorageOptions } from "./common";

/** The first line of an export: what wrote it, so that an import can refuse what it cannot read. */
interface ExportHeader {
  genserve: "export";
  format: 1;
  /** The newest migration of the store it came from. */
  schemaVersion: number;
  source: "sqlite" | "postgres";
  exportedAt: string;
}

const LATEST = Math.max(...MIGRATIONS.map((m) => m.version));

/**
 * `genserve export [--out FILE]`: every key, run, callback event and its deliveries, thread,
 * inbox, catalog version and idempotency record, as JSON Lines (a header line, then one
 * `{"table","row"}` per row, parents before children). Stop the server first for a consistent copy.
 */
export async function exportData(options: StorageOptions & { out?: string }, env: NodeJS.ProcessEnv, cwd: string): Promise<void> {
  const store = await openStore(options, env, cwd);
  const out: Writable = options.out ? createWriteStream(options.out, { flags: "wx" }) : process.stdout;
  const write = async (value: unknown) => {
    if (!out.write(`${JSON.stringify(value)}\n`)) await once(out, "drain");
  };
  const counts: Record<string, number> = {};
  try {
    const header: ExportHeader = { genserve: "export", format: 1, schemaVersion: LATEST, source: store.kind, exportedAt: new Date().toISOString() };
    await write(header);
    for (const table of TRANSFER_TABLES) {
      for await (const row of store.transfer.rows(table)) {
        await write({ table, row });
        counts[table] = (counts[table] ?? 0) + 1;
      }
    }
  } catch (error) {
    fail(`export failed: ${(error as Error).message}`);
  } finally {
    await store.close();
  }
  if (options.out) {
    out.end();
    await once(out, "finish");
  }
  process.stderr.write(`exported ${summary(counts)}\n`);
}

/**
 * `genserve import FILE`: loads an export into the configured store (SQLite or PostgreSQL, either
 * way round) in one transaction; the store must hold no keys or runs yet.
 */
export async function importData(file: string, options: StorageOptions, env: NodeJS.ProcessEnv, cwd: string): Promise<void> {
  const config = loadConfigOrExit(options, env, cwd);
  const lines = readline.createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  const iterator = lines[Symbol.asyncIterator]();
  const first = await iterator.next().catch((error: Error) => fail(`cannot read ${file}: ${error.message}`));
  let header: ExportHeader;
  try {
    header = JSON.parse(first.done ? "" : first.value) as ExportHeader;
  } catch {
    fail(`${file} is not a genserve export (its first line is not JSON)`);
  }
  if (header?.genserve !== "export" || header.format !== 1) fail(`${file} is not a genserve export (format 1)`);
  if (header.schemaVersion > LATEST) fail(`${file} was exported by a newer genserve (schema ${header.schemaVersion}; this one knows up to ${LATEST}): upgrade first`);

  let lineNumber = 1;
  async function* rows(): AsyncGenerator<{ table: TransferTable; row: TransferRow }> {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      lineNumber++;
      if (next.value.trim() === "") continue;
      let parsed: { table?: unknown; row?: unknown };
      try {
        parsed = JSON.parse(next.value) as typeof parsed;
      } catch {
        throw new Error(`line ${lineNumber} is not JSON`);
      }
      if (typeof parsed.table !== "string" || parsed.row === null || typeof parsed.row !== "object" || Array.isArray(parsed.row)) {
        throw new Error(`line ${lineNumber} is not {"table", "row"}`);
      }
      yield { table: parsed.table as TransferTable, row: parsed.row as TransferRow };
    }
  }

  const store = await openStore(options, env, cwd);
  try {
    const counts = await store.transfer.load(rows());
    process.stderr.write(`imported into ${describeStore(storeLocation(options, env, cwd, config))}: ${summary(counts)}\n`);
  } catch (error) {
    fail(`import failed, nothing was written: ${(error as Error).message}`);
  } finally {
    lines.close();
    await store.close();
  }
}

const summary = (counts: Record<string, number>) =>
  TRANSFER_TABLES.map((t) => `${counts[t] ?? 0} ${t}`).join(", ");
