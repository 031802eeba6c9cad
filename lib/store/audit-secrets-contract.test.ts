import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe } from "vitest";
import { freshDatabase, postgresAvailable, TEST_SECRETS_KEY } from "../../test/helpers/postgres";
import { auditContract } from "./contract-audit";
import { openPostgresStore } from "./postgres";
import { openSqliteStore } from "./sqlite";

// The audit log and sealed secrets on both backends: a fresh SQLite file (its key file generated in
// the data directory), or a fresh PostgreSQL database with a configured key.
describe("SQLite", () => {
  let dir = "";
  auditContract("SQLite", {
    first: async () => openSqliteStore((dir = mkdtempSync(path.join(os.tmpdir(), "genserve-audit-")))),
    second: async () => openSqliteStore(dir),
    withKey: async (secretsKey) => openSqliteStore(dir, { secretsKey }),
  });
});

const available = await postgresAvailable();

describe.runIf(available)("PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  const pool = { max: 5, idleTimeoutMs: 1_000, connectionTimeoutMs: 3_000 };
  auditContract("PostgreSQL", {
    first: async () => {
      database = await freshDatabase();
      const store = openPostgresStore(database.url, { ...pool, secretsKey: TEST_SECRETS_KEY });
      await store.migrate();
      return store;
    },
    second: async () => openPostgresStore(database!.url, { ...pool, secretsKey: TEST_SECRETS_KEY }),
    withKey: async (secretsKey) => openPostgresStore(database!.url, { ...pool, secretsKey }),
    cleanup: async () => {
      await database?.drop();
    },
  });
});
