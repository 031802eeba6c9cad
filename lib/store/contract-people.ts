import "server-only";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NO_LIMITS } from "../domain/key-limits";
import { DEFAULT_PROJECT_ID, type Role } from "../domain/roles";
import type { ContractStores } from "./contract-backends";
import type { SessionRecord, Store, UserRecord } from "./store-types";

/**
 * The people part of the storage contract (issue 34), run against every backend
 * (people-contract.test.ts): a person and their personal key stored together, identities linked
 * once, sign-in tokens used once, sessions revoked one at a time or all together, pending OIDC
 * sign-ins taken once, and failed sign-ins counted where every replica sees them.
 */
export function peopleContract(name: string, open: ContractStores) {
  let store: Store;
  const at = (ms: number) => new Date(Date.UTC(2026, 10, 26, 0, 0, 0, ms)).toISOString();
  const key = (id: string, admin = false) => ({ id, name: id, hash: id.padEnd(64, "h"), prefix: "gs_k", admin, createdAt: at(0), lastUsedAt: null, revokedAt: null, webhookSecret: "whsec_test", limits: NO_LIMITS, role: (admin ? "admin" : "editor") as Role, projectId: DEFAULT_PROJECT_ID });
  const user = (id: string, email: string): UserRecord => ({ id, email, name: null, passwordHash: null, createdAt: at(0), disabledAt: null });
  const session = (id: string, extra: Partial<SessionRecord> = {}): SessionRecord => ({
    id,
    userId: "usr_a",
    keyId: "key_pa",
    csrfToken: `csrf_${id}`,
    createdAt: at(0),
    lastSeenAt: at(0),
    idleExpiresAt: at(1_000),
    expiresAt: at(5_000),
    revokedAt: null,
    ip: "127.0.0.1",
    userAgent: "test",
    ...extra,
  });

  describe(`${name} store: people and sessions`, () => {
    beforeEach(async () => {
      store = await open.first();
    });
    afterEach(async () => {
      await store.close();
      await open.cleanup?.();
    });

    it("stores a person with their personal key, refuses a second person with the same email, and finds them by identity once linked", async () => {
      expect(await store.people.createUser(user("usr_a", "a@example.com"), key("key_pa", true))).toBe(true);
      expect(await store.people.createUser(user("usr_b", "a@example.com"), key("key_pb"))).toBe(false);
      // Nothing of the refused person is left: neither the user nor the key.
      expect(await store.people.user("usr_b")).toBeNull();
      expect(await store.keys.get("key_pb")).toBeNull();
      expect(await store.people.userByEmail("a@example.com")).toMatchObject({ id: "usr_a", passwordHash: null });
      expect(await store.people.personalKey("usr_a")).toMatchObject({ id: "key_pa", admin: true });

      expect(await store.people.userByIdentity("https://idp", "sub-1")).toBeNull();
      await store.people.linkIdentity("https://idp", "sub-1", "usr_a", at(1));
      await store.people.createUser(user("usr_c", "c@example.com"), key("key_pc"));
      await store.people.linkIdentity("https://idp", "sub-1", "usr_c", at(2)); // an existing link stays
      expect(await store.people.userByIdentity("https://idp", "sub-1")).toMatchObject({ id: "usr_a" });

      expect(await store.people.setPassword("usr_a", "scrypt$x")).toBe(true);
      expect((await store.people.user("usr_a"))?.passwordHash).toBe("scrypt$x");
      await store.people.setRole("usr_a", "viewer");
      expect(await store.keys.get("key_pa")).toMatchObject({ admin: false, role: "viewer" });
      await store.keys.revoke("key_pa", at(3));
      expect(await store.people.personalKey("usr_a")).toBeNull();
    });

    it("uses a sign-in token once, before it expires and for its purpose, even when two processes race", async () => {
      await store.people.createUser(user("usr_a", "a@example.com"), key("key_pa"));
      await store.people.insertSignInToken({ hash: "t1", userId: "usr_a", purpose: "link", createdAt: at(0), expiresAt: at(1_000) });
      await store.people.insertSignInToken({ hash: "t2", userId: "usr_a", purpose: "link", createdAt: at(0), expiresAt: at(1_000) });
      expect(await store.people.useSignInToken("t1", "other", at(10))).toBeNull();
      const other = await open.second();
      try {
        const both = await Promise.all([store.people.useSignInToken("t1", "link", at(10)), other.people.useSignInToken("t1", "link", at(10))]);
        expect(both.filter((u) => u === "usr_a")).toHaveLength(1);
        expect(both.filter((u) => u === null)).toHaveLength(1);
      } finally {
        await other.close();
      }
      expect(await store.people.useSignInToken("t1", "link", at(20))).toBeNull();
      expect(await store.people.useSignInToken("t2", "link", at(1_000))).toBeNull(); // expired
      expect(await store.people.useSignInToken("missing", "link", at(10))).toBeNull();
    });

    it("keeps sessions: seen (never past the absolute expiry), switched to another key, revoked one at a time or all of a person's or a key's", async () => {
      await store.people.createUser(user("usr_a", "a@example.com"), key("key_pa"));
      await store.keys.insert(key("key_other", true));
      await store.people.insertSession(session("s1"));
      await store.people.insertSession(session("s2"));
      await store.people.insertSession(session("s3", { userId: null, keyId: "key_other" }));
      await store.people.insertSession(session("s4", { userId: null, keyId: "key_other" }));
      expect(await store.people.session("s1")).toEqual(session("s1"));
      expect(await store.people.session("missing")).toBeNull();

      await store.people.touchSession("s1", at(500), at(1_500));
      expect(await store.people.session("s1")).toMatchObject({ lastSeenAt: at(500), idleExpiresAt: at(1_500) });
      await store.people.touchSession("s1", at(4_900), at(9_000));
      expect((await store.people.session("s1"))?.idleExpiresAt).toBe(at(5_000));

      expect(await store.people.setSessionKey("s2", "key_other")).toBe(true);
      expect((await store.people.session("s2"))?.keyId).toBe("key_other");

      expect(await store.people.revokeSession("s1", at(600))).toBe(true);
      expect(await store.people.revokeSession("s1", at(700))).toBe(false);
      expect((await store.people.session("s1"))?.revokedAt).toBe(at(600));
      expect(await store.people.setSessionKey("s1", "key_other")).toBe(false);

      // A person's sessions, whatever key they act as; then a key's sessions without a person.
      expect(await store.people.revokeSessions({ userId: "usr_a" }, at(800))).toBe(1);
      expect((await store.people.session("s2"))?.revokedAt).toBe(at(800));
      expect(await store.people.revokeSessions({ keyId: "key_other" }, at(900))).toBe(2);
      expect((await store.people.session("s4"))?.revokedAt).toBe(at(900));

      // Disabling a person: once (the first time stays), their live sessions revoked with it.
      const live = { ...(await store.people.session("s2"))!, id: "s5", revokedAt: null };
      await store.people.insertSession(live);
      expect(await store.people.disableUser("usr_a", at(950))).toBe(true);
      expect(await store.people.disableUser("usr_a", at(960))).toBe(true);
      expect((await store.people.user("usr_a"))?.disabledAt).toBe(at(950));
      expect((await store.people.session("s5"))?.revokedAt).toBe(at(950));
      expect(await store.people.disableUser("usr_nobody", at(960))).toBe(false);

      await store.people.sweep(at(10_000));
      expect(await store.people.session("s1")).toBeNull();
    });

    it("takes a pending OpenID sign-in once and not after it expired; counts sign-in attempts per window for every process, atomically", async () => {
      const login = { id: "state_hash", verifier: "v", nonce: "n", returnTo: "/runs", createdAt: at(0), expiresAt: at(600) };
      expect(await store.people.savePendingLogin(login, 3)).toBe(true);
      expect(await store.people.savePendingLogin({ ...login, id: "old" }, 3)).toBe(true);
      expect(await store.people.savePendingLogin({ ...login, id: "third" }, 3)).toBe(true);
      expect(await store.people.savePendingLogin({ ...login, id: "fourth" }, 3)).toBe(false); // bounded
      expect(await store.people.takePendingLogin("fourth", at(10))).toBeNull();
      expect(await store.people.takePendingLogin("third", at(10))).not.toBeNull();
      expect(await store.people.takePendingLogin("state_hash", at(10))).toEqual(login);
      expect(await store.people.takePendingLogin("state_hash", at(10))).toBeNull();
      expect(await store.people.takePendingLogin("old", at(600))).toBeNull();
      // Expired sign-ins do not count against the bound (they are forgotten first).
      await store.people.savePendingLogin({ ...login, id: "stale", createdAt: at(0), expiresAt: at(5) }, 3);
      expect(await store.people.savePendingLogin({ ...login, id: "later", createdAt: at(700), expiresAt: at(1300) }, 1)).toBe(true);

      const other = await open.second();
      try {
        expect(await store.people.countAttempt("email:a@example.com", at(0))).toBe(1);
        expect(await other.people.countAttempt("email:a@example.com", at(0))).toBe(2);
        expect(await other.people.attempts("email:a@example.com", at(0))).toBe(2);
        expect(await store.people.attempts("email:a@example.com", at(60_000))).toBe(0);
        expect(await store.people.attempts("ip:127.0.0.1", at(0))).toBe(0);
        // Parallel attempts (two processes) each get their own count.
        const counts = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? other : store).people.countAttempt("ip:10.0.0.1", at(0))));
        expect([...counts].sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        await store.people.uncountAttempt("ip:10.0.0.1", at(0), false);
        expect(await other.people.attempts("ip:10.0.0.1", at(0))).toBe(9);
        await store.people.uncountAttempt("email:a@example.com", at(0), true);
        expect(await store.people.attempts("email:a@example.com", at(0))).toBe(0);
        await store.people.uncountAttempt("email:a@example.com", at(0), false);
        expect(await store.people.attempts("email:a@example.com", at(0))).toBe(0);
      } finally {
        await other.close();
      }
    });

    it("keeps a project's people: joins once, keeps an admin person when two demote each other at once, revokes a removed member's key", async () => {
      await store.projects.insert({ id: "prj_b", slug: "b", name: "B", createdAt: at(0) });
      await store.people.createUser(user("usr_a", "a@example.com"), key("key_pa", true));
      await store.people.createUser(user("usr_b", "b@example.com"), key("key_pb"));
      const inB = (id: string, admin: boolean) => ({ ...key(id, admin), projectId: "prj_b" });
      expect((await store.members.join("usr_a", inB("key_ba", true))).id).toBe("key_ba");
      // A second join is the same membership.
      expect((await store.members.join("usr_a", inB("key_ba2", false))).id).toBe("key_ba");
      expect(await store.keys.get("key_ba2")).toBeNull();
      await store.members.join("usr_b", inB("key_bb", true));
      expect((await store.members.list("prj_b")).map((m) => [m.email, m.role])).toEqual([["a@example.com", "admin"], ["b@example.com", "admin"]]);
      expect((await store.members.memberships("usr_a")).map((m) => [m.slug, m.role])).toEqual([["b", "admin"], ["default", "admin"]]);

      const other = await open.second();
      try {
        const outcomes = await Promise.all([store.members.change("prj_b", "usr_a", "viewer", at(1)), other.members.change("prj_b", "usr_b", "viewer", at(1))]);
        expect([...outcomes].sort()).toEqual(["last_admin", "ok"]);
        expect((await store.members.list("prj_b")).filter((m) => m.role === "admin")).toHaveLength(1);
      } finally {
        await other.close();
      }
      const stillAdmin = (await store.members.list("prj_b")).find((m) => m.role === "admin")!;
      const demoted = (await store.members.list("prj_b")).find((m) => m.role !== "admin")!;
      expect(await store.members.change("prj_b", stillAdmin.userId, null, at(2))).toBe("last_admin");
      expect(await store.members.change("prj_b", demoted.userId, null, at(2))).toBe("ok");
      expect(await store.members.change("prj_b", demoted.userId, null, at(3))).toBe("not_member");
      expect(await store.members.keyIn("prj_b", demoted.userId)).toBeNull();
      expect((await store.keys.get(demoted.keyId))?.revokedAt).toBe(at(2));
      // The default project's membership is untouched.
      expect(await store.members.keyIn(DEFAULT_PROJECT_ID, demoted.userId)).not.toBeNull();
    });

    it("uses an invitation once, even when two processes race, and not after it expired or was revoked", async () => {
      const invite = (id: string, expiresAt = at(10_000)) => ({ id, tokenHash: `hash_${id}`, projectId: DEFAULT_PROJECT_ID, email: "x@example.com", role: "viewer" as Role, createdBy: null, createdAt: at(0), expiresAt, acceptedAt: null, revokedAt: null });
      await store.members.insertInvite(invite("inv_1"));
      await store.members.insertInvite(invite("inv_2", at(5)));
      await store.members.insertInvite(invite("inv_3"));
      expect((await store.members.pendingInvites(DEFAULT_PROJECT_ID, at(1))).map((i) => i.id).sort()).toEqual(["inv_1", "inv_2", "inv_3"]);
      const other = await open.second();
      try {
        const won = await Promise.all([store.members.acceptInvite("hash_inv_1", at(1)), other.members.acceptInvite("hash_inv_1", at(1))]);
        expect(won.filter((w) => w !== null)).toHaveLength(1);
      } finally {
        await other.close();
      }
      expect(await store.members.acceptInvite("hash_inv_2", at(6))).toBeNull();
      expect(await store.members.revokeInvite("prj_other", "inv_3", at(2))).toBe(false);
      expect(await store.members.revokeInvite(DEFAULT_PROJECT_ID, "inv_3", at(2))).toBe(true);
      expect(await store.members.acceptInvite("hash_inv_3", at(3))).toBeNull();
      expect(await store.members.pendingInvites(DEFAULT_PROJECT_ID, at(6))).toEqual([]);
      expect(await store.members.inviteByToken("hash_inv_1")).toMatchObject({ acceptedAt: at(1) });
    });
  });
}
