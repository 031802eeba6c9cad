import path from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { CALLBACK } from "../helpers/config";
import { cli, createKey, readReply } from "../helpers/genserve";
import { CookieJar } from "../helpers/oidc-provider";
import { useGenserve } from "../helpers/suite";

// A project's people over real HTTP: admins invite (a one-time link, 7 days), change roles and
// remove members; a person in two projects switches between them and sees each one's resources
// only. Removing a member revokes their personal key there: their session in that project ends (401).
// Every project keeps an admin person.

const ctx = useGenserve();
let base: string;
/** Ada: admin of the default project, signed in through a one-time link. */
let ada: CookieJar;
let defaultRun: string;
let betaAdminKey: string;

const csrfOf = new Map<CookieJar, string>();

const session = async (jar: CookieJar) => {
  const response = await jar.fetch(`${base}/api/v1/session`);
  const body = response.status === 200 ? ((await response.json()) as any) : null;
  if (body?.csrfToken) csrfOf.set(jar, body.csrfToken);
  return { status: response.status, body };
};

/** A request of a signed-in browser: same origin, with the session's CSRF token on changes. */
async function as(jar: CookieJar, method: string, url: string, body?: unknown) {
  if (method !== "GET" && !csrfOf.has(jar)) await session(jar);
  const response = await jar.fetch(`${base}${url}`, {
    method,
    headers: { origin: base, ...(method !== "GET" && { "x-csrf-token": csrfOf.get(jar)! }), ...(body !== undefined && { "content-type": "application/json" }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return readReply(response);
}

async function withKey(key: string, method: string, url: string, body?: unknown) {
  const response = await fetch(`${base}${url}`, {
    method,
    headers: { "api-key": key, ...(body !== undefined && { "content-type": "application/json" }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined };
}

/** Opens an invitation link (its page), then joins from it, in `jar`. */
async function redeem(url: string, jar: CookieJar) {
  const link = `${base}${new URL(url).pathname}`;
  const page = await jar.fetch(link);
  const html = await page.text();
  const joined = await jar.fetch(link, { method: "POST", headers: { origin: base } });
  return { page, html, joined, text: joined.status === 303 ? "" : await joined.text() };
}

const runText = (caller: { jar?: CookieJar; key?: string }, input: string, workflowSlug = "no-retry") => {
  const body = { input, type: "event", callback: CALLBACK, workflowSlug };
  return caller.jar ? as(caller.jar, "POST", "/api/v1/generate/text", body) : withKey(caller.key!, "POST", "/api/v1/generate/text", body);
};

beforeAll(async () => {
  base = ctx.server.url;
  const dir = path.dirname(ctx.server.dataDir);
  const out = await cli(["users", "create", "--email", "ada@example.com", "--role", "admin", "--public-url", base], { dataDir: ctx.server.dataDir, configFile: path.join(dir, "genserve.yaml") });
  const link = /(http:\/\/\S+\/auth\/link\/[A-Za-z0-9_-]{43})/.exec(out)![1]!;
  ada = new CookieJar();
  expect((await ada.fetch(link, { method: "POST", headers: { origin: base } })).status).toBe(303);
  expect((await session(ada)).body).toMatchObject({ via: "session", role: "admin", project: { slug: "default" } });

  const run = await runText({ key: ctx.key }, "DEFAULT PROJECT RUN");
  expect(run.status).toBe(200);
  defaultRun = (run.json as any).metadata.runId;

  expect((await withKey(ctx.key, "POST", "/api/v1/projects", { slug: "beta", name: "Beta" })).status).toBe(201);
  betaAdminKey = (await createKey("beta-admin", { dataDir: ctx.server.dataDir, role: "admin", project: "beta" })).key;
  expect((await withKey(ctx.key, "POST", "/api/v1/projects", { slug: "gamma", name: "Gamma" })).status).toBe(201);
});

describe("invitations", () => {
  it("lets an admin invite a new person, who joins as a viewer: reads the project's runs, cannot run", async () => {
    const invite = await as(ada, "POST", "/api/v1/members/invites", { email: "Vic@Example.com", role: "viewer" });
    expect(invite.status).toBe(201);
    expect(invite.json).toMatchObject({ email: "vic@example.com", role: "viewer", url: expect.stringMatching(/\/auth\/invite\/[A-Za-z0-9_-]{43}$/) });
    expect(Date.parse(invite.json.expiresAt) - Date.parse(invite.json.createdAt)).toBe(7 * 24 * 3600 * 1000);
    const listed = await as(ada, "GET", "/api/v1/members");
    expect(listed.json.invites).toEqual([expect.objectContaining({ id: invite.json.id, email: "vic@example.com", role: "viewer" })]);
    expect(JSON.stringify(listed.json)).not.toContain(new URL(invite.json.url).pathname.split("/").pop()!);

    const vic = new CookieJar();
    const { html, joined } = await redeem(invite.json.url, vic);
    expect(html).toContain("Join Default as viewer");
    expect(joined.status).toBe(303);
    const me = await session(vic);
    expect(me.body).toMatchObject({ via: "session", user: { email: "vic@example.com" }, role: "viewer", project: { slug: "default" }, projects: [{ slug: "default", role: "viewer" }] });
    const runs = await as(vic, "GET", "/api/v1/runs");
    expect(runs.status).toBe(200);
    expect(runs.json.runs.map((r: { id: string }) => r.id)).toContain(defaultRun);
    expect((await runText({ jar: vic }, "a viewer's run")).status).toBe(403);
    expect((await as(vic, "POST", "/api/v1/members/invites", { email: "x@example.com", role: "admin" })).status).toBe(403);

    // Used once: the link is spent, the page says so; the member list holds Vic, not the invitation.
    const again = await redeem(invite.json.url, new CookieJar());
    expect(again.page.status).toBe(400);
    expect(again.html).toContain("not valid");
    expect(again.joined.status).toBe(400);
    const after = await as(ada, "GET", "/api/v1/members");
    expect(after.json.invites).toEqual([]);
    expect(after.json.members).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ email: "ada@example.com", role: "admin" }),
        expect.objectContaining({ email: "vic@example.com", role: "viewer", lastActiveAt: expect.any(String) }),
      ]),
    );
  });

  it("refuses an invitation that expired, was revoked, or comes from another site", async () => {
    const expiring = await as(ada, "POST", "/api/v1/members/invites", { email: "late@example.com", role: "editor" });
    const db = new Database(path.join(ctx.server.dataDir, "genserve.sqlite"));
    try {
      db.pragma("busy_timeout = 10000");
      expect(db.prepare("UPDATE invites SET expires_at = ? WHERE id = ?").run("2000-01-01T00:00:00.000Z", expiring.json.id).changes).toBe(1);
    } finally {
      db.close();
    }
    const late = await redeem(expiring.json.url, new CookieJar());
    expect(late.html).toContain("has expired");
    expect(late.joined.status).toBe(400);

    const revoked = await as(ada, "POST", "/api/v1/members/invites", { email: "gone@example.com", role: "editor" });
    expect((await as(ada, "DELETE", `/api/v1/members/invites/${revoked.json.id}`)).status).toBe(204);
    expect((await as(ada, "DELETE", `/api/v1/members/invites/${revoked.json.id}`)).status).toBe(404);
    expect((await redeem(revoked.json.url, new CookieJar())).joined.status).toBe(400);

    const crossSite = await as(ada, "POST", "/api/v1/members/invites", { email: "cross@example.com", role: "editor" });
    const link = `${base}${new URL(crossSite.json.url).pathname}`;
    expect((await new CookieJar().fetch(link, { method: "POST", headers: { origin: "https://evil.example" } })).status).toBe(403);
    expect((await redeem(crossSite.json.url, new CookieJar())).joined.status).toBe(303);
  });

  it("lets only admins manage members: viewer and editor keys get 403", async () => {
    for (const role of ["viewer", "editor"] as const) {
      const { key } = await createKey(`members-${role}`, { dataDir: ctx.server.dataDir, role });
      expect((await withKey(key, "POST", "/api/v1/members/invites", { email: "y@example.com", role: "viewer" })).status).toBe(403);
      expect((await withKey(key, "GET", "/api/v1/members")).status).toBe(403);
    }
    expect((await withKey(ctx.key, "GET", "/api/v1/members")).status).toBe(200);
  });

  it("does not sign anyone into an existing person's account: they must be signed in as themselves", async () => {
    const invite = await withKey(betaAdminKey, "POST", "/api/v1/members/invites", { email: "ada@example.com", role: "editor" });
    expect(invite.status).toBe(201);
    const stranger = await redeem(invite.json.url, new CookieJar());
    expect(stranger.joined.status).toBe(400);
    expect(stranger.text).toContain("sign in as ada@example.com first");
    // Ada, signed in, joins: her session moves to Beta (same session, same cookie).
    const before = ada.get(base, "genserve_session");
    expect((await redeem(invite.json.url, ada)).joined.status).toBe(303);
    expect(ada.get(base, "genserve_session")).toBe(before);
    expect((await session(ada)).body).toMatchObject({ role: "editor", project: { slug: "beta" } });
    // Beta's admin made Ada editor there; back to admin in Beta for the next tests.
    const members = await withKey(betaAdminKey, "GET", "/api/v1/members");
    const adaId = members.json.members.find((m: { email: string }) => m.email === "ada@example.com").userId;
    expect((await withKey(betaAdminKey, "PATCH", `/api/v1/members/${adaId}`, { role: "admin" })).json).toMatchObject({ role: "admin" });
  });
});

describe("switching project", () => {
  it("shows each project's resources only, and refuses a project the person is not in", async () => {
    const me = await session(ada);
    expect(me.body.projects).toEqual([
      { slug: "beta", name: "Beta", role: "admin" },
      { slug: "default", name: "Default", role: "admin" },
    ]);
    // The configuration's workflows are the default project's: Beta writes its own.
    expect((await withKey(betaAdminKey, "PUT", "/api/v1/workflows/beta-flow", { model: "fast", instructions: "Beta's own." })).status).toBe(201);
    const betaRun = await runText({ key: betaAdminKey }, "BETA PROJECT RUN", "beta-flow");
    expect(betaRun.status).toBe(200);
    const betaRunId = (betaRun.json as any).metadata.runId;

    expect((await as(ada, "GET", `/api/v1/runs/${defaultRun}`)).status).toBe(404);
    expect((await as(ada, "GET", `/api/v1/runs/${betaRunId}`)).status).toBe(200);

    const back = await as(ada, "POST", "/auth/project", { project: "default" });
    expect(back.status).toBe(200);
    expect((await session(ada)).body).toMatchObject({ project: { slug: "default" }, role: "admin" });
    const runs = await as(ada, "GET", "/api/v1/runs");
    expect(runs.json.runs.map((r: { id: string }) => r.id)).toContain(defaultRun);
    expect(runs.json.runs.map((r: { id: string }) => r.id)).not.toContain(betaRunId);
    expect((await as(ada, "GET", `/api/v1/runs/${betaRunId}`)).status).toBe(404);

    expect((await as(ada, "POST", "/auth/project", { project: "gamma" })).status).toBe(404);
    expect((await as(ada, "POST", "/auth/project", { project: "nowhere" })).status).toBe(404);
    // From another site, or without the CSRF token: refused.
    const cross = await ada.fetch(`${base}/auth/project`, { method: "POST", headers: { origin: "https://evil.example", "x-csrf-token": csrfOf.get(ada)!, "content-type": "application/json" }, body: JSON.stringify({ project: "beta" }) });
    expect(cross.status).toBe(403);
    const noToken = await ada.fetch(`${base}/auth/project`, { method: "POST", headers: { origin: base, "content-type": "application/json" }, body: JSON.stringify({ project: "beta" }) });
    expect(noToken.status).toBe(403);
    expect((await session(ada)).body).toMatchObject({ project: { slug: "default" } });
  });
});

describe("roles and removal", () => {
  it("applies a role change on the next request, and ends a removed member's session (401)", async () => {
    const invite = await as(ada, "POST", "/api/v1/members/invites", { email: "rex@example.com", role: "viewer" });
    const rex = new CookieJar();
    expect((await redeem(invite.json.url, rex)).joined.status).toBe(303);
    expect((await runText({ jar: rex }, "before")).status).toBe(403);
    const rexId = (await session(rex)).body.user.id;

    const changed = await as(ada, "PATCH", `/api/v1/members/${rexId}`, { role: "editor" });
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject({ email: "rex@example.com", role: "editor" });
    expect((await runText({ jar: rex }, "after")).status).toBe(200);

    expect((await as(ada, "DELETE", `/api/v1/members/${rexId}`)).status).toBe(204);
    expect((await session(rex)).status).toBe(401);
    expect((await as(ada, "GET", "/api/v1/members")).json.members.map((m: { email: string }) => m.email)).not.toContain("rex@example.com");
    expect((await as(ada, "DELETE", `/api/v1/members/${rexId}`)).status).toBe(404);

    const audit = await as(ada, "GET", "/api/v1/audit?action=member.");
    const actions = audit.json.events.map((e: { action: string }) => e.action);
    expect(actions).toEqual(expect.arrayContaining(["member.invite", "member.join", "member.role", "member.remove", "member.invite.revoke"]));
    const removal = audit.json.events.find((e: { action: string }) => e.action === "member.remove");
    expect(removal).toMatchObject({ actor: { kind: "person", label: "ada@example.com" }, subject: { kind: "user", id: rexId } });
  });

  it("keeps the project's last admin: not demoted, not removed (409)", async () => {
    const adaId = (await session(ada)).body.user.id;
    expect((await as(ada, "PATCH", `/api/v1/members/${adaId}`, { role: "editor" })).status).toBe(409);
    expect((await as(ada, "DELETE", `/api/v1/members/${adaId}`)).status).toBe(409);
    expect((await session(ada)).body).toMatchObject({ role: "admin" });
    // With a second admin, the first may step down.
    const invite = await as(ada, "POST", "/api/v1/members/invites", { email: "ben@example.com", role: "admin" });
    expect((await redeem(invite.json.url, new CookieJar())).joined.status).toBe(303);
    expect((await as(ada, "PATCH", `/api/v1/members/${adaId}`, { role: "editor" })).status).toBe(200);
    expect((await session(ada)).body).toMatchObject({ role: "editor" });
  });
});
