import "server-only";
import type { Config } from "../config/config-types";
import type { ModelFile } from "../models/model-source";

/**
 * What the `genserve serve` process hands to the Next.js server it runs in-process: plain, frozen
 * data only. The CLI (loaded by tsx) and the Next.js bundle hold separate copies of genserve's
 * modules, so nothing with behaviour crosses this boundary; the bundle builds its own runtime.
 */
export interface BootOptions {
  config: Config;
  dataDir: string;
  /** The package root (app, lib and the .next build), for files loaded at run time. */
  appRoot: string;
  logLevel: string;
  version: string;
  /** Where callers reach the service: `server.publicUrl`, else the address it listens on. */
  publicUrl: string;
  /** PostgreSQL (DATABASE_URL, --database-url or database.url); absent: SQLite in the data directory. */
  databaseUrl?: string;
  /**
   * A helper process beside a server on the same storage (`genserve eval` on a data directory): it
   * honours other processes' leases even on SQLite, and takes no queued asynchronous runs.
   */
  shared?: boolean;
  /** Local (llama-cpp) models: the file each alias resolved to, or why there is none. */
  localModels?: Record<string, ModelFile>;
}

const BOOT = Symbol.for("genserve.boot");

export function setBootOptions(options: BootOptions): void {
  (globalThis as Record<symbol, unknown>)[BOOT] = Object.freeze(options);
}

export function getBootOptions(): BootOptions | undefined {
  return (globalThis as Record<symbol, unknown>)[BOOT] as BootOptions | undefined;
}
