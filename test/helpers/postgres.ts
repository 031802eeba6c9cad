import { randomBytes } from "node:crypto";
import pg from "pg";

/** The server the PostgreSQL suites use (each suite gets a database of its own on it). */
export const POSTGRES_URL = process.env.GENSERVE_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/**
 * Whether PostgreSQL can be reached. In CI (CI=1, set by .ci/run) an unreachable server fails the
 * suite; elsewhere the suite is skipped, and says why.
 */
/** The key sealing signing secrets in test databases (every store of one test must share it, as replicas do). */
export const TEST_SECRETS_KEY = Buffer.alloc(32, 7);
/** The same key as genserve.yaml's security.secretsKey takes it from a variable: `{env: GENSERVE_TEST_SECRETS_KEY}`. */
export const TEST_SECRETS_ENV = { GENSERVE_TEST_SECRETS_KEY: TEST_SECRETS_KEY.toString("base64") };

export async function postgresAvailable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch (error) {
    const reason = `PostgreSQL is not reachable at ${POSTGRES_URL} (${(error as Error).message}); set GENSERVE_TEST_POSTGRES_URL or start it`;
    if (process.env.CI) throw new Error(reason);
    process.stderr.write(`skipping PostgreSQL tests: ${reason}\n`);
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A fresh, empty database on the test server; `drop` removes it (closing what is still connected). */
export async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `genserve_test_${randomBytes(5).toString("hex")}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
