import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_SECRETS_KEY, freshDatabase, postgresAvailable } from "../../test/helpers/postgres";
import { storeContract } from "./contract";
import { evaluationContract } from "./contract-evaluations";
import { projectContract } from "./contract-projects";
import { forPostgres, MIGRATIONS } from "./migrations";
import { openPostgresStore } from "./postgres";
import type { Store } from "./store-types";

// The storage contract on a real PostgreSQL server: a fresh database per test; the second handle is
// another pool on the same database, as another replica would have.
const available = await postgresAvailable();
const POOL = { max: 5, idleTimeoutMs: 1_000, connectionTimeoutMs: 3_000, secretsKey: TEST_SECRETS_KEY };

describe.runIf(available)("PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  const others: Awaited<ReturnType<typeof freshDatabase>>[] = [];
  const opened: Store[] = [];
  const openOne = async (url = database!.url) => {
    const store = openPostgresStore(url, POOL);
    opened.push(store);
    await store.migrate();
    return store;
  };
  const stores = {
    first: async () => {
      database = await freshDatabase();
      return openOne();
    },
    second: () => openOne(),
    another: async () => {
      const other = await freshDatabase();
      others.push(other);
      return openOne(other.url);
    },
    upgraded: async (version: number, seed: readonly string[]) => {
      // An install of an older version: its migrations applied as the store applies them, its rows, then the store opened (migrating the rest).
      const old = await freshDatabase();
      others.push(old);
      const { default: pg } = await import("pg");
      const client = new pg.Client({ connectionString: old.url });
      await client.connect();
      try {
        await client.query("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)");
        for (const migration of MIGRATIONS.filter((m) => m.version <= version)) {
          await client.query(forPostgres(migration.sql));
          await client.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [migration.version, migration.name, new Date().toISOString()]);
        }
        for (const sql of seed) await client.query(sql);
      } finally {
        await client.end();
      }
      return openOne(old.url);
    },
    cleanup: async () => {
      await Promise.all(opened.splice(0).map((s) => s.close().catch(() => undefined)));
      await database?.drop();
      await Promise.all(others.splice(0).map((d) => d.drop()));
    },
  };
  storeContract("PostgreSQL", stores);
  evaluationContract("PostgreSQL", stores);
  projectContract("PostgreSQL", stores);

  describe("migrations", () => {
    let db: Awaited<ReturnType<typeof freshDatabase>>;
    beforeAll(async () => (db = await freshDatabase()));
    afterAll(() => db?.drop());

    it("apply once when several processes start together, and again not at all", async () => {
      const stores = Array.from({ length: 4 }, () => openPostgresStore(db.url, POOL));
      await Promise.all(stores.map((s) => s.migrate()));
      await stores[0]!.migrate();
      const { default: pg } = await import("pg");
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      const { rows } = await client.query<{ n: number; versions: number }>("SELECT COUNT(*)::int AS n, COUNT(DISTINCT version)::int AS versions FROM schema_migrations");
      await client.end();
      expect(rows[0]!.n).toBe(rows[0]!.versions);
      expect(rows[0]!.n).toBeGreaterThanOrEqual(9);
      await Promise.all(stores.map((s) => s.close()));
    });
  });
});
