import "server-only";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe } from "vitest";
import { freshDatabase, postgresAvailable, TEST_SECRETS_KEY } from "../../test/helpers/postgres";
import { openPostgresStore } from "./postgres";
import { openSqliteStore } from "./sqlite";
import type { Store } from "./store-types";

/** How a contract opens its stores: a first handle, a second one on the same data, and what to clean after. */
export interface ContractStores {
  first(): Promise<Store>;
  second(): Promise<Store>;
  cleanup?(): Promise<void>;
}

/**
 * Runs a store contract on both backends: a fresh SQLite file, or a fresh PostgreSQL database (when
 * one is reachable), per test; the second handle is another connection (a CLI command) or another
 * pool (a replica).
 */
export async function onBothBackends(contract: (name: string, open: ContractStores) => void): Promise<void> {
  describe("SQLite", () => {
    let dir = "";
    contract("SQLite", {
      first: async () => openSqliteStore((dir = mkdtempSync(path.join(os.tmpdir(), "genserve-store-")))),
      second: async () => openSqliteStore(dir),
    });
  });

  const available = await postgresAvailable();
  describe.runIf(available)("PostgreSQL", () => {
    let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
    const opened: Store[] = [];
    const openOne = async () => {
      const store = openPostgresStore(database!.url, { max: 5, idleTimeoutMs: 1_000, connectionTimeoutMs: 3_000, secretsKey: TEST_SECRETS_KEY });
      opened.push(store);
      await store.migrate();
      return store;
    };
    contract("PostgreSQL", {
      first: async () => {
        database = await freshDatabase();
        return openOne();
      },
      second: () => openOne(),
      cleanup: async () => {
        await Promise.all(opened.splice(0).map((s) => s.close().catch(() => undefined)));
        await database?.drop();
      },
    });
  });
}
