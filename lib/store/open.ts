import "server-only";
import type { SecretsKeySource } from "../config/config-types";
import type { DatabaseSettings } from "../config/schema";
import { openPostgresStore } from "./postgres";
import { loadSecretsKey } from "./secrets-key";
import { openSqliteStore } from "./sqlite";
import type { Store } from "./store-types";

export interface StoreLocation {
  /** postgres://… (DATABASE_URL, else database.url); absent: the SQLite file in `dataDir`. */
  databaseUrl?: string;
  dataDir: string;
  pool: DatabaseSettings["pool"];
  /** SQLite: the worker that checkpoints its WAL off the event loop (a server's store; `CHECKPOINT_WORKER_FILE`). */
  checkpointWorker?: string;
  /** `security.secretsKey`: the key sealing stored signing secrets (secrets-key.ts says what happens without one). */
  secretsKey: SecretsKeySource | null;
}

/** The configured store: PostgreSQL when a database URL is given, else the embedded SQLite file. */
export function openStore(location: StoreLocation): Store {
  const secretsKey = loadSecretsKey(location.secretsKey, { postgres: Boolean(location.databaseUrl), dataDir: location.dataDir });
  return location.databaseUrl
    ? openPostgresStore(location.databaseUrl, { ...location.pool, secretsKey })
    : openSqliteStore(location.dataDir, { checkpointWorker: location.checkpointWorker, secretsKey });
}

/** Where a store lives, for logs: never the URL's password. */
export function describeStore(location: StoreLocation): string {
  if (!location.databaseUrl) return `SQLite in ${location.dataDir}`;
  const url = new URL(location.databaseUrl);
  if (url.password) url.password = "***";
  return `PostgreSQL at ${url.toString()}`;
}
