import { spawn } from "node:child_process";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, startGenserve, tempDir, writeConfig, type GenserveServer } from "../helpers/genserve";
import { CookieJar, startTestProvider } from "../helpers/oidc-provider";

// People signing in over real HTTP: a real OpenID provider (oidc-provider) on loopback and the
// real server; a cookie jar per "browser". The code flow with PKCE, state and nonce checked, group
// → role mapping, sessions that end (expiry, sign out, everywhere), CSRF, no open redirect, local
// accounts (one-time links, passwords and their limits), and nothing secret in the log.

const ACCOUNTS = {
  alice: { email: "alice@example.com", groups: ["gs-admins", "staff"] },
  bob: { email: "Bob@Example.com", groups: ["gs-users"] },
  eve: { email: "eve@example.com", groups: ["contractors"] },
  dora: { email: "dora@example.com", groups: ["gs-users"] },
};
const PASSWORD = "a long enough passphrase 42";

let idp: Awaited<ReturnType<typeof startTestProvider>>;
let server: GenserveServer;
let dataDir: string;
let base: string;
const secrets: string[] = [];

beforeAll(async () => {
  idp = await startTestProvider(ACCOUNTS);
  dataDir = tempDir("genserve-sign-in-");
  const config = writeConfig(
    dataDir,
    `
server:
  trustedProxies: [192.0.2.1, 10.0.0.0/8]
auth:
  oidc:
    issuer: ${idp.issuer}
    clientId: ${idp.clientId}
    clientSecret: ${idp.clientSecret}
    name: Test IdP
    scopes: [openid, email, profile, groups]
    groupsClaim: groups
    roles: { gs-admins: admin, gs-users: viewer }
  passwordAttemptsPerEmail: 3
  passwordAttemptsPerAddress: 8
`,
  );
  server = await startGenserve({ configFile: config, dataDir: path.join(dataDir, "data") });
  base = server.url;
  idp.register(`${base}/auth/callback`);
  secrets.push(idp.clientSecret);
});

afterAll(async () => {
  await server?.stop();
  await idp?.close();
});

/**
 * Signs `account` in through the provider in a fresh browser (or `jar`): genserve's login, the
 * provider's login and consent, and back. `tamper` changes the authorization URL or the callback's
 * before they are followed. Returns the callback's answer.
 */
async function ssoSignIn(account: string, options: { jar?: CookieJar; returnTo?: string; tamperAuthorize?(url: URL): void; tamperCallback?(url: URL): void } = {}) {
  const jar = options.jar ?? new CookieJar();
  const login = await jar.fetch(`${base}/auth/login${options.returnTo ? `?returnTo=${encodeURIComponent(options.returnTo)}` : ""}`);
  expect(login.status).toBe(302);
  const authorize = new URL(login.headers.get("location")!);
  expect(authorize.origin).toBe(idp.issuer);
  expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
  options.tamperAuthorize?.(authorize);
  let url = authorize.href;
  // The provider's own pages: login, consent, each answered as a person would.
  for (let step = 0; step < 12; step++) {
    const response = await jar.fetch(url);
    const location = response.headers.get("location");
    if (response.status === 200 && url.includes("/interaction/")) {
      const page = await response.text();
      const prompt = page.includes('name="login"') ? "login" : "consent";
      const submitted = await jar.fetch(url, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(prompt === "login" ? { prompt, login: account, password: "x" } : { prompt }).toString(),
      });
      url = new URL(submitted.headers.get("location")!, url).href;
      continue;
    }
    expect(location, `step ${step}: ${response.status} at ${url}: ${await response.text()}`).toBeTruthy();
    url = new URL(location!, url).href;
    if (url.startsWith(`${base}/auth/callback`)) break;
  }
  const callback = new URL(url);
  expect(callback.pathname).toBe("/auth/callback");
  options.tamperCallback?.(callback);
  const answer = await jar.fetch(callback.href);
  const token = jar.get(base, "genserve_session");
  if (token) secrets.push(token);
  return { jar, answer, text: answer.status === 303 ? "" : await answer.text() };
}

const session = async (jar: CookieJar) => {
  const response = await jar.fetch(`${base}/api/v1/session`);
  const body = response.status === 200 ? ((await response.json()) as { via: string; admin: boolean; user: { email: string } | null; csrfToken: string }) : null;
  if (body?.csrfToken) secrets.push(body.csrfToken);
  return { status: response.status, body };
};

const change = (jar: CookieJar, headers: Record<string, string>) =>
  jar.fetch(`${base}/api/v1/keys`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ name: "from-a-session" }) });

describe("sign-in with OpenID Connect", () => {
  it("runs the code flow with PKCE to a session cookie that calls the API, as the person mapped to their group's role", async () => {
    const { jar, answer } = await ssoSignIn("alice", { returnTo: "/runs?status=failed" });
    expect(answer.status).toBe(303);
    expect(answer.headers.get("location")).toBe("/runs?status=failed");
    const cookie = answer.headers.getSetCookie().find((c) => c.startsWith("genserve_session="))!;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).not.toMatch(/Secure/); // http here; https public URLs get Secure
    const me = await session(jar);
    expect(me.body).toMatchObject({ via: "session", admin: true, user: { email: "alice@example.com" } });
    expect((await jar.fetch(`${base}/api/v1/keys`)).status).toBe(200); // an admin route
    // A viewer's group maps to a non-admin key; the email is kept lower-cased.
    const bob = await ssoSignIn("bob");
    expect((await session(bob.jar)).body).toMatchObject({ admin: false, user: { email: "bob@example.com" } });
    expect((await bob.jar.fetch(`${base}/api/v1/keys`)).status).toBe(403);
    expect((await bob.jar.fetch(`${base}/api/v1/me`)).status).toBe(200);
  });

  it("refuses a person none of whose groups is mapped", async () => {
    const { answer, text, jar } = await ssoSignIn("eve");
    expect(answer.status).toBe(400);
    expect(text).toContain("None of your groups is allowed");
    expect(jar.get(base, "genserve_session")).toBeUndefined();
  });

  it("refuses a wrong state, a callback in another browser, a wrong nonce, and a replayed callback", async () => {
    const wrongState = await ssoSignIn("alice", { tamperCallback: (u) => u.searchParams.set("state", "not-the-state") });
    expect(wrongState.answer.status).toBe(400);
    expect(wrongState.text).toContain("state does not match");
    expect(wrongState.jar.get(base, "genserve_session")).toBeUndefined();

    let callbackUrl = "";
    const elsewhere = await ssoSignIn("alice", { tamperCallback: (u) => void (callbackUrl = u.href) });
    expect(elsewhere.answer.status).toBe(303);
    const other = new CookieJar();
    const replay = await other.fetch(callbackUrl);
    expect(replay.status).toBe(400);
    // The same browser again: the sign-in was used up.
    elsewhere.jar.set(base, "genserve_oidc", new URL(callbackUrl).searchParams.get("state")!);
    const again = await elsewhere.jar.fetch(callbackUrl);
    expect(again.status).toBe(400);
    expect(await again.text()).toContain("expired or was completed already");

    const wrongNonce = await ssoSignIn("alice", { tamperAuthorize: (u) => u.searchParams.set("nonce", "someone-elses-nonce") });
    expect(wrongNonce.answer.status).toBe(400);
    expect(wrongNonce.text).toContain("was not accepted");
    expect(wrongNonce.jar.get(base, "genserve_session")).toBeUndefined();
  });

  it("never redirects to another site after sign-in", async () => {
    for (const returnTo of ["https://evil.example/", "//evil.example/path", "/\\evil.example"]) {
      const { answer } = await ssoSignIn("alice", { returnTo });
      expect(answer.status).toBe(303);
      expect(answer.headers.get("location")).toBe("/");
    }
  });
});

describe("sessions", () => {
  it("ends on sign out (the old cookie replayed is refused), and everywhere for all of the person's browsers", async () => {
    const one = (await ssoSignIn("alice")).jar;
    const two = (await ssoSignIn("alice")).jar;
    const token = one.get(base, "genserve_session")!;
    const { body } = await session(one);
    // From another site: refused, and the cookie is not cleared (with or without the token).
    const crossSite: Record<string, string>[] = [{ origin: "https://evil.example" }, { origin: "https://evil.example", "x-csrf-token": body!.csrfToken }, {}];
    for (const headers of crossSite) {
      const cross = await one.fetch(`${base}/auth/logout`, { method: "POST", headers });
      expect(cross.status).toBe(403);
      expect(cross.headers.getSetCookie()).toEqual([]);
    }
    expect(one.get(base, "genserve_session")).toBe(token);
    const out = await one.fetch(`${base}/auth/logout`, { method: "POST", headers: { origin: base, "x-csrf-token": body!.csrfToken } });
    expect(out.status).toBe(200);
    expect(one.get(base, "genserve_session")).toBeUndefined(); // the cookie is cleared
    const replayed = await fetch(`${base}/api/v1/me`, { headers: { cookie: `genserve_session=${token}` } });
    expect(replayed.status).toBe(401);
    expect(((await replayed.json()) as { code: string }).code).toBe("unauthorized");
    expect((await session(two)).status).toBe(200);

    const three = (await ssoSignIn("alice")).jar;
    const csrf = (await session(three)).body!.csrfToken;
    const everywhere = await three.fetch(`${base}/auth/logout?everywhere=1`, { method: "POST", headers: { origin: base, "x-csrf-token": csrf } });
    expect(((await everywhere.json()) as { ended: number }).ended).toBeGreaterThanOrEqual(2);
    expect((await session(two)).status).toBe(401);
    expect((await session(three)).status).toBe(401);
  });

  it("refuses an expired session", async () => {
    const { jar } = await ssoSignIn("bob");
    expect((await session(jar)).status).toBe(200);
    const id = (await import("node:crypto")).createHash("sha256").update(jar.get(base, "genserve_session")!).digest("hex");
    // Its idle time ran out (the database is the one every replica reads).
    const db = new Database(path.join(dataDir, "data", "genserve.sqlite"));
    try {
      db.pragma("busy_timeout = 10000");
      // The session knows the client's address as the server saw the connection.
      expect((db.prepare("SELECT ip FROM sessions WHERE id = ?").get(id) as { ip: string }).ip).toMatch(/127\.0\.0\.1$/);
      expect(db.prepare("UPDATE sessions SET idle_expires_at = ? WHERE id = ?").run("2000-01-01T00:00:00.000Z", id).changes).toBe(1);
    } finally {
      db.close();
    }
    expect((await session(jar)).status).toBe(401);
  });

  it("records the connection's address, not one the client claims (it is no trusted proxy)", async () => {
    const jar = new CookieJar();
    const spoofed = { "content-type": "application/json", origin: base, "x-genserve-peer": "203.0.113.9", "x-forwarded-for": "198.51.100.7" };
    expect((await jar.fetch(`${base}/auth/key`, { method: "POST", headers: spoofed, body: JSON.stringify({ key: server.adminKey }) })).status).toBe(200);
    const token = jar.get(base, "genserve_session")!;
    secrets.push(token);
    const id = (await import("node:crypto")).createHash("sha256").update(token).digest("hex");
    const db = new Database(path.join(dataDir, "data", "genserve.sqlite"));
    try {
      db.pragma("busy_timeout = 10000");
      expect((db.prepare("SELECT ip FROM sessions WHERE id = ?").get(id) as { ip: string }).ip).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    } finally {
      db.close();
    }
  });

  it("needs this site's origin and the session's CSRF token for every change sent with the cookie; keys need neither", async () => {
    const { jar } = await ssoSignIn("alice");
    const csrf = (await session(jar)).body!.csrfToken;
    const noToken = await change(jar, { origin: base });
    expect(noToken.status).toBe(403);
    expect(((await noToken.json()) as { code: string }).code).toBe("csrf_refused");
    expect((await change(jar, { origin: "https://evil.example", "x-csrf-token": csrf })).status).toBe(403);
    expect((await change(jar, { "x-csrf-token": csrf })).status).toBe(403); // neither Origin nor Sec-Fetch-Site
    expect((await change(jar, { origin: base, "x-csrf-token": "x".repeat(43) })).status).toBe(403);
    expect((await change(jar, { "sec-fetch-site": "same-origin", "x-csrf-token": csrf })).status).toBe(201);
    expect((await change(jar, { origin: base, "x-csrf-token": csrf })).status).toBe(201);
    // The Api-Key contract is unchanged: no origin, no token.
    const byKey = await fetch(`${base}/api/v1/keys`, { method: "POST", headers: { "api-key": server.adminKey!, "content-type": "application/json" }, body: JSON.stringify({ name: "by-key" }) });
    expect(byKey.status).toBe(201);
  });

  it("signs in with the printed admin key (exchanged for a session) only from this site, and starts a new session each time", async () => {
    const jar = new CookieJar();
    const cross = await jar.fetch(`${base}/auth/key`, { method: "POST", headers: { "content-type": "application/json", origin: "https://evil.example" }, body: JSON.stringify({ key: server.adminKey }) });
    expect(cross.status).toBe(403);
    const first = await jar.fetch(`${base}/auth/key`, { method: "POST", headers: { "content-type": "application/json", origin: base }, body: JSON.stringify({ key: server.adminKey }) });
    expect(first.status).toBe(200);
    const before = jar.get(base, "genserve_session")!;
    secrets.push(before);
    expect((await session(jar)).body).toMatchObject({ via: "session", admin: true, user: null });
    await jar.fetch(`${base}/auth/key`, { method: "POST", headers: { "content-type": "application/json", origin: base }, body: JSON.stringify({ key: server.adminKey }) });
    const after = jar.get(base, "genserve_session")!;
    secrets.push(after);
    expect(after).not.toBe(before);
    expect((await fetch(`${base}/api/v1/me`, { headers: { cookie: `genserve_session=${before}` } })).status).toBe(401);
    const wrong = await jar.fetch(`${base}/auth/key`, { method: "POST", headers: { "content-type": "application/json", origin: base }, body: JSON.stringify({ key: "gs_" + "A".repeat(43) }) });
    expect(wrong.status).toBe(401);
  });
});

/** `genserve users password`, the password written to its stdin. */
function setPassword(email: string, password: string): Promise<number | null> {
  const child = spawn(process.execPath, [path.resolve("bin/genserve.mjs"), "users", "password", "--email", email, "--data", path.join(dataDir, "data"), "--config", path.join(dataDir, "genserve.yaml")], { stdio: ["pipe", "ignore", "inherit"] });
  child.stdin.end(`${password}\n`);
  return new Promise((resolve) => child.on("exit", resolve));
}

const passwordSignIn = (jar: CookieJar, email: string, password: string) =>
  jar.fetch(`${base}/auth/password`, { method: "POST", headers: { "content-type": "application/json", origin: base }, body: JSON.stringify({ email, password }) });

describe("local accounts", () => {
  it("signs in once with the link `genserve users create` prints", async () => {
    const out = await cli(["users", "create", "--email", "Carol@Example.com", "--role", "editor", "--public-url", base], { dataDir: path.join(dataDir, "data"), configFile: path.join(dataDir, "genserve.yaml") });
    const link = /(http:\/\/\S+\/auth\/link\/[A-Za-z0-9_-]{43})/.exec(out)![1]!;
    secrets.push(link.split("/").pop()!);
    const jar = new CookieJar();
    // Opening it (as a link scanner would, twice) only shows a page whose form posts it back.
    for (let i = 0; i < 2; i++) {
      const page = await jar.fetch(link);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toContain("text/html");
      const html = await page.text();
      expect(html).toContain("Continue signing in");
      expect(html).toContain(`<form method="post" action="${new URL(link).pathname}">`);
      expect(jar.get(base, "genserve_session")).toBeUndefined();
    }
    // Posted from another site (login CSRF): refused, and the link stays usable.
    const cross = await new CookieJar().fetch(link, { method: "POST", headers: { origin: "https://evil.example" } });
    expect(cross.status).toBe(403);
    const first = await jar.fetch(link, { method: "POST", headers: { origin: base } });
    expect(first.status).toBe(303);
    expect((await session(jar)).body).toMatchObject({ admin: false, user: { email: "carol@example.com" } });
    const second = await new CookieJar().fetch(link, { method: "POST", headers: { origin: base } });
    expect(second.status).toBe(400);
    expect(await second.text()).toContain("not valid");
  });

  it("checks no more parallel wrong passwords than the limit: the rest are refused unchecked", async () => {
    // Eight at once for one email (limit 3): each is counted before its password is checked.
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => passwordSignIn(new CookieJar(), "dan@example.com", `parallel guess ${i}`)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429, 429, 429]);
  });

  it("signs in with a password, with one answer for every wrong part, and limits failures per email and per address", async () => {
    expect(await setPassword("carol@example.com", PASSWORD)).toBe(0);
    secrets.push(PASSWORD);
    const jar = new CookieJar();
    expect((await passwordSignIn(jar, "carol@example.com", PASSWORD)).status).toBe(200);
    expect((await session(jar)).body).toMatchObject({ user: { email: "carol@example.com" } });
    const wrong = await passwordSignIn(new CookieJar(), "carol@example.com", "not the passphrase");
    const unknown = await passwordSignIn(new CookieJar(), "nobody@example.com", "not the passphrase");
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(await wrong.text()).toBe(await unknown.text());
    // Three failures for carol (limit 3): even the right password waits now.
    await passwordSignIn(new CookieJar(), "carol@example.com", "still not it");
    await passwordSignIn(new CookieJar(), "carol@example.com", "nor this");
    const limited = await passwordSignIn(new CookieJar(), "carol@example.com", PASSWORD);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    // This address: 3 failures in the parallel test and 4 here (refused attempts are not counted),
    // limit 8; one more and any email is refused.
    for (const n of [1]) expect((await passwordSignIn(new CookieJar(), `guess${n}@example.com`, "guess")).status).toBe(401);
    expect((await passwordSignIn(new CookieJar(), "other@example.com", "guess")).status).toBe(429);
  });
});

describe("an account made beforehand", () => {
  it("becomes the provider's person at their first SSO sign-in, and whoever was signed in to it before is signed out", async () => {
    // As an account an invitation made: whoever held the link may have opened it.
    const out = await cli(["users", "create", "--email", "dora@example.com", "--role", "viewer", "--public-url", base], { dataDir: path.join(dataDir, "data"), configFile: path.join(dataDir, "genserve.yaml") });
    const link = /(http:\/\/\S+\/auth\/link\/[A-Za-z0-9_-]{43})/.exec(out)![1]!;
    secrets.push(link.split("/").pop()!);
    const earlier = new CookieJar();
    expect((await earlier.fetch(link, { method: "POST", headers: { origin: base } })).status).toBe(303);
    expect((await session(earlier)).status).toBe(200);
    const { jar, answer, text } = await ssoSignIn("dora");
    expect(answer.status, text).toBe(303);
    expect((await session(jar)).body).toMatchObject({ via: "session", user: { email: "dora@example.com" } });
    expect((await session(earlier)).status).toBe(401);
  });
});

describe("the log", () => {
  it("holds no session token, CSRF token, password, sign-in link or client secret", () => {
    const log = server.output();
    expect(secrets.length).toBeGreaterThan(10);
    for (const secret of secrets) expect(log.includes(secret), `a secret of ${secret.length} characters is in the log`).toBe(false);
  });
});
