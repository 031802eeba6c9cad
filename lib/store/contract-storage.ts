import "server-only";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NO_LIMITS } from "../domain/key-limits";
import type { ContractStores } from "./contract-backends";
import type { Store } from "./store-types";

/**
 * The storage contract's part on what a key may hold (issue 31), run against every backend
 * (storage-contract.test.ts): per-key caps that keys racing at them never pass, and inboxes bounded
 * in count, bytes and age, read a page at a time. `open` as for `storeContract`.
 */
export function storageContract(name: string, open: ContractStores) {
  let store: Store;
  const at = (ms: number) => new Date(Date.UTC(2026, 10, 23, 0, 0, 0, ms)).toISOString();
  const key = (id: string) => ({ id, name: id, hash: id.padEnd(64, "h"), prefix: "gs_k", admin: false, role: "editor" as const, projectId: "prj_default", createdAt: at(0), lastUsedAt: null, revokedAt: null, webhookSecret: "whsec_test", limits: NO_LIMITS });
  const refusal = (resource: string, limit: number, used = limit) => ({ code: "quota_exceeded", status: 409, extensions: { quota: { resource, limit, used } } });
  describe(`${name} store: what a key may hold`, () => {
    beforeEach(async () => {
      store = await open.first();
      await store.keys.insert(key("key_a"));
      await store.keys.insert(key("key_b"));
    });
    afterEach(async () => {
      await store.close();
      await open.cleanup?.();
    });

    it("caps a key's inboxes, share links that still work, and threads, naming what is full; other keys are not affected", async () => {
      const inbox = (id: string, keyId = "key_a") => ({ id, keyId, host: "h", createdAt: at(0) });
      for (const id of ["inb_1", "inb_2"]) await store.inboxes.create(inbox(id), 2);
      await expect(store.inboxes.create(inbox("inb_3"), 2)).rejects.toMatchObject(refusal("inboxes", 2));
      expect(await store.inboxes.get("inb_3")).toBeNull();
      await store.inboxes.create(inbox("inb_4", "key_b"), 2);

      const share = (id: string, extra: object = {}) => ({ id, tokenHash: `hash_${id}`, kind: "run" as const, targetId: "run_1", keyId: "key_a", hideFields: [], expiresAt: null, revokedAt: null, createdAt: at(10), ...extra });
      await store.shares.create(share("shr_1"), 2);
      await store.shares.create(share("shr_old", { expiresAt: at(5) }), 2); // already expired at(10): not counted
      await store.shares.create(share("shr_2"), 2);
      await expect(store.shares.create(share("shr_3"), 2)).rejects.toMatchObject(refusal("shares", 2));
      await store.shares.revoke("shr_1", at(11));
      await store.shares.create(share("shr_3"), 2); // a revoked link frees its place

      const thread = (id: string) => ({ id, keyId: "key_a", workflowSlug: "w", createdAt: at(0), updatedAt: at(0) });
      expect(await store.threads.create(thread("t1"), 2)).toBe(true);
      expect(await store.threads.create(thread("t2"), 2)).toBe(true);
      expect(await store.threads.create(thread("t1"), 2)).toBe(false); // exists: a conflict, not a quota
      await expect(store.threads.create(thread("t3"), 2)).rejects.toMatchObject(refusal("threads", 2));
      await store.threads.delete("key_a", "t2");
      expect(await store.threads.create(thread("t3"), 2)).toBe(true);

      await store.suites.put("s1", "key_a", { cases: [] }, at(0));
      expect(await store.quotas.usage("key_a", at(12))).toEqual({ inboxes: 2, shares: 2, threads: 2, suites: 1 });
      expect(await store.quotas.usage("key_b", at(12))).toEqual({ inboxes: 1, shares: 0, threads: 0, suites: 0 });
      // Without a limit a write is not capped (what the store holds already stays).
      await store.inboxes.create(inbox("inb_5"));
      expect((await store.quotas.usage("key_a", at(12))).inboxes).toBe(3);
    });

    it("never lets processes racing at a cap pass it", async () => {
      const other = await open.second();
      try {
        const made = await Promise.allSettled(
          Array.from({ length: 24 }, (_, i) => (i % 2 ? store : other).inboxes.create({ id: `inb_r${i}`, keyId: "key_a", host: "h", createdAt: at(0) }, 5)),
        );
        expect(made.filter((m) => m.status === "fulfilled")).toHaveLength(5);
        for (const m of made) if (m.status === "rejected") expect(m.reason).toMatchObject({ code: "quota_exceeded" });
        expect((await store.quotas.usage("key_a", at(0))).inboxes).toBe(5);
      } finally {
        await other.close();
      }
    });

    it("keeps an inbox's newest deliveries within its count, bytes and age (the newest always), in the transaction that stores one", async () => {
      await store.inboxes.create({ id: "inb_1", keyId: "key_a", host: "h", createdAt: at(0) });
      // Each delivery takes 102 bytes: a body of 100 and headers of 2 ("{}").
      const receive = (i: number, bounds: { keep?: number; maxBytes?: number; maxAgeMs?: number } = {}, body = String(i).padStart(100, "x")) =>
        store.inboxes.receive("inb_1", { receivedAt: at(i * 1_000), headers: {}, body, verified: i % 2 === 0 }, { keep: 100, maxBytes: 1_000_000, maxAgeMs: 3_600_000, ...bounds });
      const bodies = async () => (await store.inboxes.events("inb_1", { limit: 100, maxBytes: 1_000_000 })).events.map((e) => Number(e.body.replace(/x/g, "")));
      for (let i = 1; i <= 6; i++) await receive(i);
      expect(await bodies()).toEqual([6, 5, 4, 3, 2, 1]);
      await receive(7, { keep: 5 });
      expect(await bodies()).toEqual([7, 6, 5, 4, 3]);
      await receive(8, { maxBytes: 3 * 102 });
      expect(await bodies()).toEqual([8, 7, 6]);
      await receive(9, { maxBytes: 50 }, "9".padStart(200, "x")); // larger than the inbox may hold: kept alone
      expect(await bodies()).toEqual([9]);
      await receive(10);
      await receive(70, { maxAgeMs: 30_000 }); // 60 s later: older than 30 s is gone
      expect(await bodies()).toEqual([70]);
    });

    it("reads an inbox a page at a time, newest first, by count and by bytes (always at least one delivery), to the oldest", async () => {
      await store.inboxes.create({ id: "inb_1", keyId: "key_a", host: "h", createdAt: at(0) });
      for (let i = 1; i <= 7; i++) {
        await store.inboxes.receive("inb_1", { receivedAt: at(i), headers: { n: String(i) }, body: `body ${i}`.padEnd(100, "."), verified: true }, { keep: 100, maxBytes: 1_000_000, maxAgeMs: 3_600_000 });
      }
      const walk = async (page: { limit: number; maxBytes: number }) => {
        const pages: string[][] = [];
        let before: number | undefined;
        do {
          const got = await store.inboxes.events("inb_1", { ...page, before });
          pages.push(got.events.map((e) => e.headers.n!));
          before = got.next ?? undefined;
        } while (before !== undefined);
        return pages;
      };
      expect(await walk({ limit: 3, maxBytes: 1_000_000 })).toEqual([["7", "6", "5"], ["4", "3", "2"], ["1"]]);
      // 100-byte bodies and 9-byte headers: two fit in 250 bytes, and one is given past any bound.
      expect(await walk({ limit: 100, maxBytes: 250 })).toEqual([["7", "6"], ["5", "4"], ["3", "2"], ["1"]]);
      expect(await walk({ limit: 100, maxBytes: 10 })).toEqual([["7"], ["6"], ["5"], ["4"], ["3"], ["2"], ["1"]]);
      expect(await store.inboxes.events("inb_1", { limit: 7, maxBytes: 1_000_000 })).toMatchObject({ next: null });
      expect(await store.inboxes.events("inb_none", { limit: 7, maxBytes: 1_000_000 })).toEqual({ events: [], next: null });
    });
  });
}
