import "server-only";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError, loadConfig } from "../config/load";
import type { Config } from "../config/config-types";
import { openStore as openStoreAt, type StoreLocation } from "../store/open";
import { SecretsKeyError } from "../store/secret-box";
import type { Store } from "../store/store-types";

/** The package root: where package.json, app/ and the .next build live. */
export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

export const VERSION = (JSON.parse(readFileSync(path.join(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string }).version;

export interface StorageOptions {
  config?: string;
  data?: string;
  /** `--database-url postgres://…`: PostgreSQL instead of the SQLite file in the data directory. */
  databaseUrl?: string;
  /** `--model FILE.gguf | hf:…`: the local model for the `local` alias and the `default` workflow. */
  model?: string;
}

/** Options every storage-touching command shares, resolved against the environment once. */
export function resolveDataDir(options: StorageOptions, env: NodeJS.ProcessEnv, cwd: string): string {
  return path.resolve(cwd, options.data ?? env.GENSERVE_DATA_DIR ?? "data");
}

export function loadConfigOrExit(options: StorageOptions, env: NodeJS.ProcessEnv, cwd: string): Config {
  try {
    return loadConfig({ file: options.config, cwd, env, model: options.model ?? env.GENSERVE_MODEL });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`genserve: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

/** Where the store is: --database-url, else DATABASE_URL, else database.url, else SQLite in the data directory. */
export function storeLocation(options: StorageOptions, env: NodeJS.ProcessEnv, cwd: string, config: Config): StoreLocation {
  const databaseUrl = options.databaseUrl ?? (env.DATABASE_URL || undefined) ?? config.database.url;
  return { databaseUrl, dataDir: resolveDataDir(options, env, cwd), pool: config.database.pool, secretsKey: config.security.secretsKey };
}

/** The configured store, migrated; exits with the reason when it cannot be reached. */
export async function openStore(options: StorageOptions, env: NodeJS.ProcessEnv, cwd: string): Promise<Store> {
  let store: Store;
  try {
    store = openStoreAt(storeLocation(options, env, cwd, loadConfigOrExit(options, env, cwd)));
  } catch (error) {
    if (error instanceof SecretsKeyError) fail(error.message, 2);
    throw error;
  }
  try {
    await store.migrate();
  } catch (error) {
    await store.close().catch(() => undefined);
    fail(`cannot open the database: ${(error as Error).message}`);
  }
  return store;
}

export function fail(message: string, code = 1): never {
  process.stderr.write(`genserve: ${message}\n`);
  process.exit(code);
}
