import { createHash } from "node:crypto";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createKey } from "../keys/api-keys";
import { openSqliteStore } from "../store/sqlite";
import type { Store } from "../store/store-types";
import { Accounts } from "./accounts";
import { cookieName, readCookie, serializeCookie, Sessions } from "./sessions";

const MINUTE = 60_000;
let store: Store;
let sessions: Sessions;
let accounts: Accounts;
const client = { ip: "127.0.0.1", userAgent: "test" };
const t0 = new Date(Date.UTC(2026, 10, 26, 9, 0, 0));
const later = (ms: number) => new Date(t0.getTime() + ms);
const record = (token: string) => createHash("sha256").update(token, "utf8").digest("hex");

beforeEach(() => {
  store = openSqliteStore(mkdtempSync(path.join(os.tmpdir(), "genserve-sessions-")));
  sessions = new Sessions(store, { idleMs: 30 * MINUTE, maxMs: 120 * MINUTE });
  accounts = new Accounts(store, { passwordAttemptsPerEmail: 5, passwordAttemptsPerAddress: 50, passwordWindowMs: 15 * MINUTE });
});
afterEach(() => store.close());

describe("sessions", () => {
  it("act as the person's personal key, stay alive while used, and end when idle or at their absolute expiry", async () => {
    const user = await accounts.create({ email: "Ana@Example.com", role: "admin" }, t0);
    const key = await accounts.personalKey(user.id);
    const { token, record } = await sessions.start({ userId: user.id, keyId: key.id }, client, t0);
    expect(record.id).not.toBe(token); // stored hashed
    expect((await sessions.resolve(token, later(MINUTE))).principal).toMatchObject({ keyId: key.id, admin: true, via: "session", userId: user.id });
    // Used every 20 minutes: alive past the first idle expiry, until the absolute one.
    for (let m = 20; m < 120; m += 20) await sessions.resolve(token, later(m * MINUTE));
    await expect(sessions.resolve(token, later(120 * MINUTE))).rejects.toMatchObject({ code: "unauthorized" });
    const idle = await sessions.start({ userId: user.id, keyId: key.id }, client, t0);
    await expect(sessions.resolve(idle.token, later(31 * MINUTE))).rejects.toMatchObject({ code: "unauthorized" });
  });

  it("end when their key is revoked, and refuse tokens that are not theirs", async () => {
    const { record } = await createKey(store, { name: "k", admin: false });
    const { token } = await sessions.start({ userId: null, keyId: record.id }, client, t0);
    expect((await sessions.resolve(token, later(1))).principal).toMatchObject({ keyId: record.id, via: "session" });
    expect((await sessions.resolve(token, later(1))).principal.userId).toBeUndefined();
    await store.keys.revoke(record.id, later(2).toISOString());
    await expect(sessions.resolve(token, later(3))).rejects.toMatchObject({ code: "unauthorized" });
    await expect(sessions.resolve("x".repeat(43), later(3))).rejects.toMatchObject({ code: "unauthorized" });
    await expect(sessions.resolve("short", later(3))).rejects.toMatchObject({ code: "unauthorized" });
  });

  it("write an HttpOnly, SameSite=Lax cookie, Secure over https, read back from a Cookie header", () => {
    expect(sessions.cookie("tok", false)).toBe("genserve_session=tok; Path=/; Max-Age=7200; HttpOnly; SameSite=Lax");
    // Secure: the __Host- prefix (https only, this host only: Path=/ and no Domain).
    expect(sessions.cookie("tok", true)).toBe("__Host-genserve_session=tok; Path=/; Max-Age=7200; HttpOnly; SameSite=Lax; Secure");
    expect(serializeCookie("genserve_oidc", "", { maxAgeSeconds: 0, secure: true })).toBe("__Host-genserve_oidc=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Secure");
    expect(cookieName("genserve_session", false)).toBe("genserve_session");
    expect(readCookie("genserve_session=evil; __Host-genserve_session=tok", cookieName("genserve_session", true))).toBe("tok");
    expect(readCookie("a=1; genserve_session=tok; b=2", "genserve_session")).toBe("tok");
    expect(readCookie("a=1", "genserve_session")).toBeNull();
  });
});

describe("local accounts", () => {
  it("redeem a sign-in link once, and refuse a second person with the same email", async () => {
    const user = await accounts.create({ email: "bo@example.com", role: "viewer" }, t0);
    expect((await accounts.personalKey(user.id)).admin).toBe(false);
    await expect(accounts.create({ email: "BO@example.com ", role: "admin" })).rejects.toMatchObject({ code: "conflict" });
    const token = await accounts.signInToken(user.id, t0);
    expect((await accounts.redeem(token, later(MINUTE))).id).toBe(user.id);
    await expect(accounts.redeem(token, later(MINUTE))).rejects.toMatchObject({ code: "sign_in_failed" });
    const late = await accounts.signInToken(user.id, t0);
    await expect(accounts.redeem(late, later(16 * MINUTE))).rejects.toMatchObject({ code: "sign_in_failed" });
  });

  it("disable a person: no sign-in of any kind, and every session of theirs ends", async () => {
    const user = await accounts.create({ email: "cy@example.com", role: "editor" }, t0);
    const key = await accounts.personalKey(user.id);
    const { token } = await sessions.start({ userId: user.id, keyId: key.id }, client, t0);
    const link = await accounts.signInToken(user.id, t0);
    await accounts.disable("CY@example.com", later(MINUTE));
    expect((await accounts.get(user.id))?.disabledAt).toBe(later(MINUTE).toISOString());
    await expect(sessions.resolve(token, later(2 * MINUTE))).rejects.toMatchObject({ code: "unauthorized" });
    expect((await store.people.session(record(token)))?.revokedAt).toBe(later(MINUTE).toISOString());
    await expect(accounts.redeem(link, later(2 * MINUTE))).rejects.toMatchObject({ code: "sign_in_failed" });
    await expect(accounts.disable("nobody@example.com")).rejects.toMatchObject({ code: "not_found" });
  });

  it("end a person's sessions when their password is changed", async () => {
    const user = await accounts.create({ email: "di@example.com", role: "viewer" }, t0);
    const key = await accounts.personalKey(user.id);
    const { token } = await sessions.start({ userId: user.id, keyId: key.id }, client, t0);
    await sessions.resolve(token, later(MINUTE));
    await accounts.setPassword("di@example.com", "a brand new passphrase");
    await expect(sessions.resolve(token, later(2 * MINUTE))).rejects.toMatchObject({ code: "unauthorized" });
  });
});
