import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, startGenserve, tempDir, writeConfig, type GenserveServer } from "../helpers/genserve";
import { CookieJar } from "../helpers/oidc-provider";
import { freshDatabase, postgresAvailable, TEST_SECRETS_ENV } from "../helpers/postgres";

// Sessions live in the database: a browser signed in on one replica is signed in on every other,
// and signing out on one ends it on all; failed password sign-ins are counted where every replica
// sees them.
const available = await postgresAvailable();

describe.runIf(available)("sessions across replicas on one PostgreSQL database", () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let a: GenserveServer;
  let b: GenserveServer;
  let configFile: string;

  beforeAll(async () => {
    database = await freshDatabase();
    configFile = writeConfig(tempDir("genserve-replica-sessions-"), "auth:\n  passwordAttemptsPerEmail: 2\n# Replicas share the key that seals signing secrets (PostgreSQL needs one configured).\nsecurity:\n  secretsKey:\n    env: GENSERVE_TEST_SECRETS_KEY\n");
    const replica = () => startGenserve({ configFile, dataDir: path.join(tempDir(), "data"), env: { DATABASE_URL: database.url, ...TEST_SECRETS_ENV } });
    a = await replica();
    b = await replica();
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await database?.drop();
  });

  it("accepts a session started on one replica on the other, and ends it everywhere on sign out", async () => {
    const adminKey = a.adminKey ?? b.adminKey;
    const jar = new CookieJar();
    const signedIn = await jar.fetch(`${a.url}/auth/key`, { method: "POST", headers: { "content-type": "application/json", origin: a.url }, body: JSON.stringify({ key: adminKey }) });
    expect(signedIn.status).toBe(200);
    const cookie = `genserve_session=${jar.get(a.url, "genserve_session")}`;
    const onB = await fetch(`${b.url}/api/v1/session`, { headers: { cookie } });
    expect(onB.status).toBe(200);
    const { csrfToken } = (await onB.json()) as { csrfToken: string };
    // A change on B with the token A's session was given.
    const made = await fetch(`${b.url}/api/v1/keys`, { method: "POST", headers: { cookie, origin: b.url, "x-csrf-token": csrfToken, "content-type": "application/json" }, body: JSON.stringify({ name: "from-b" }) });
    expect(made.status).toBe(201);
    const out = await fetch(`${b.url}/auth/logout`, { method: "POST", headers: { cookie, origin: b.url, "x-csrf-token": csrfToken } });
    expect(out.status).toBe(200);
    expect((await fetch(`${a.url}/api/v1/me`, { headers: { cookie } })).status).toBe(401);
  });

  it("counts failed password sign-ins for every replica", async () => {
    const out = await cli(["users", "create", "--email", "dee@example.com", "--role", "viewer", "--public-url", a.url], { dataDir: path.join(tempDir(), "data"), configFile, env: { DATABASE_URL: database.url, ...TEST_SECRETS_ENV } });
    expect(out).toContain("/auth/link/");
    const attempt = (server: GenserveServer) =>
      fetch(`${server.url}/auth/password`, { method: "POST", headers: { "content-type": "application/json", origin: server.url }, body: JSON.stringify({ email: "dee@example.com", password: "wrong wrong wrong" }) });
    expect((await attempt(a)).status).toBe(401);
    expect((await attempt(b)).status).toBe(401);
    expect((await attempt(a)).status).toBe(429);
    expect((await attempt(b)).status).toBe(429);
  });
});
