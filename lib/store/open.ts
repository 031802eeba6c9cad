import "server-only";
import type { DatabaseSettings } from "../config/schema";
import { openPostgresStore } from "./postgres";
import { openSqliteStore } from "./sqlite";
import type { Store } from "./store-types";

export interface StoreLocation {
  /** postgres://… (DATABASE_URL, else database.url); absent: the SQLite file in `dataDir`. */
  databaseUrl?: string;
  dataDir: string;
  pool: DatabaseSettings["pool"];
  /** SQLite: the worker that checkpoints its WAL off the event loop (a server's store; `CHECKPOINT_WORKER_FILE`). */
  checkpointWorker?: string;
}

/** The configured store: PostgreSQL when a database URL is given, else the embedded SQLite file. */
export function openStore(location: StoreLocation): Store {
  return location.databaseUrl ? openPostgresStore(location.databaseUrl, location.pool) : openSqliteStore(location.dataDir, { checkpointWorker: location.checkpointWorker });
}

/** Where a store lives, for logs: never the URL's password. */
export function describeStore(location: StoreLocation): string {
  if (!location.databaseUrl) return `SQLite in ${location.dataDir}`;
  const url = new URL(location.databaseUrl);
  if (url.password) url.password = "***";
  return `PostgreSQL at ${url.toString()}`;
}
