import "server-only";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NO_LIMITS } from "../domain/key-limits";
import { isSealed } from "./secret-box";
import type { AuditEntry, Store, TransferRow } from "./store-types";

/**
 * The storage contract's part on the audit log and on signing secrets sealed at rest, run against
 * every backend (audit-secrets-contract.test.ts). `first` opens a fresh, empty store; `second` a
 * second handle on it (another process) with the same key; `withKey` a handle under another key.
 */
export function auditContract(name: string, open: { first(): Promise<Store>; second(): Promise<Store>; withKey(key: Buffer): Promise<Store>; cleanup?(): Promise<void> }) {
  let store: Store;
  const opened: Store[] = [];
  const at = (ms: number) => new Date(Date.UTC(2026, 10, 26, 0, 0, 0, ms)).toISOString();
  const key = (id: string, webhookSecret = `whsec_${id}_secret`) => ({ id, name: id, hash: id.padEnd(64, "h"), prefix: "gs_k", admin: false, createdAt: at(0), lastUsedAt: null, revokedAt: null, webhookSecret, limits: NO_LIMITS, role: "editor" as const, projectId: "prj_default" });
  const entry = (ms: number, action: string, subject: { kind: string; id: string }, actorId = "key_a"): AuditEntry => ({
    at: at(ms),
    projectId: null,
    actor: { kind: "key", id: actorId, label: actorId },
    ip: "127.0.0.1",
    userAgent: "test",
    action,
    subject,
    changes: { name: { before: "a", after: "b" } },
  });
  const rawKeys = async (s: Store) => {
    const rows: TransferRow[] = [];
    for await (const row of s.transfer.rows("api_keys")) rows.push(row);
    return rows;
  };
  const another = async (make: () => Promise<Store>) => {
    const s = await make();
    opened.push(s);
    return s;
  };

  describe(`${name} store: the audit log and sealed signing secrets`, () => {
    beforeEach(async () => {
      store = await open.first();
    });
    afterEach(async () => {
      await Promise.all([store, ...opened.splice(0)].map((s) => s.close().catch(() => undefined)));
      await open.cleanup?.();
    });

    it("lists entries newest first, filtered by actor, action prefix, subject and time, a page at a time", async () => {
      await store.audit.append(entry(1, "key.create", { kind: "key", id: "key_b" }));
      await store.audit.append(entry(2, "key.limits", { kind: "key", id: "key_b" }));
      await store.audit.append(entry(3, "workflow.label.move", { kind: "workflow", id: "invoice" }, "key_c"));
      const all = await store.audit.list({ limit: 10 });
      expect(all.map((e) => e.action)).toEqual(["workflow.label.move", "key.limits", "key.create"]);
      expect(all[2]).toMatchObject({ at: at(1), projectId: null, actor: { kind: "key", id: "key_a", label: "key_a" }, ip: "127.0.0.1", userAgent: "test", subject: { kind: "key", id: "key_b" }, changes: { name: { before: "a", after: "b" } } });
      expect((await store.audit.list({ limit: 10, actionPrefix: "key." })).map((e) => e.action)).toEqual(["key.limits", "key.create"]);
      expect((await store.audit.list({ limit: 10, actorId: "key_c" })).map((e) => e.action)).toEqual(["workflow.label.move"]);
      expect((await store.audit.list({ limit: 10, subjectKind: "key", subjectId: "key_b" })).length).toBe(2);
      expect((await store.audit.list({ limit: 10, from: at(2), to: at(3) })).map((e) => e.action)).toEqual(["key.limits"]);
      const [first] = await store.audit.list({ limit: 1 });
      expect((await store.audit.list({ limit: 10, beforeSeq: first!.seq })).map((e) => e.action)).toEqual(["key.limits", "key.create"]);
    });

    it("keeps an entry when its subject is deleted", async () => {
      await store.keys.insert(key("key_a"));
      await store.suites.put("s1", "key_a", { cases: [] }, at(0));
      await store.audit.append(entry(1, "suite.create", { kind: "suite", id: "s1" }));
      await store.suites.delete("s1");
      await store.audit.append(entry(2, "suite.delete", { kind: "suite", id: "s1" }));
      expect((await store.audit.list({ limit: 10, subjectKind: "suite", subjectId: "s1" })).map((e) => e.action)).toEqual(["suite.delete", "suite.create"]);
    });

    it("stores signing secrets sealed, and gives them back plain (rotation included)", async () => {
      await store.keys.insert(key("key_a"));
      const [row] = await rawKeys(store);
      expect(isSealed(String(row!.webhook_secret))).toBe(true);
      expect(JSON.stringify(row)).not.toContain("whsec_key_a_secret");
      expect((await store.keys.get("key_a"))!.webhookSecret).toBe("whsec_key_a_secret");
      await store.keys.rotateSecret("key_a", "whsec_rotated", at(100));
      const [rotated] = await rawKeys(store);
      expect(isSealed(String(rotated!.webhook_secret)) && isSealed(String(rotated!.previous_webhook_secret))).toBe(true);
      expect(JSON.stringify(rotated)).not.toMatch(/whsec_/);
      expect(await store.keys.secrets("key_a")).toEqual({ current: "whsec_rotated", previous: "whsec_key_a_secret", previousUntil: at(100) });
    });

    it("seals secrets stored in plain text when processes start, once, however many start together", async () => {
      // An export of an older version (plain text) imported, then two processes starting at once.
      const plain = { id: "key_old", name: "old", hash: "h".repeat(64), prefix: "gs_o", admin: 0, created_at: at(0), webhook_secret: "whsec_plain_old", previous_webhook_secret: "whsec_plain_prev", previous_secret_until: at(9_000) };
      async function* rows() {
        yield { table: "api_keys" as const, row: plain as TransferRow };
        yield { table: "api_keys" as const, row: { ...plain, id: "key_none", hash: "g".repeat(64), webhook_secret: null, previous_webhook_secret: null, previous_secret_until: null } as TransferRow };
      }
      await store.transfer.load(rows());
      const other = await another(open.second);
      await Promise.all([store.migrate(), other.migrate()]);
      const sealed = await rawKeys(store);
      expect(sealed.every((r) => isSealed(String(r.webhook_secret)))).toBe(true);
      expect(JSON.stringify(sealed)).not.toContain("whsec_plain");
      expect(await other.keys.secrets("key_old")).toEqual({ current: "whsec_plain_old", previous: "whsec_plain_prev", previousUntil: at(9_000) });
      expect((await store.keys.get("key_none"))!.webhookSecret).toMatch(/^whsec_/);
      await store.migrate();
      expect(await rawKeys(store)).toEqual(sealed);
    });

    it("refuses to start under another key, saying so", async () => {
      await store.keys.insert(key("key_a"));
      const wrong = await another(() => open.withKey(Buffer.alloc(32, 1)));
      await expect(wrong.migrate()).rejects.toThrow(/secrets key/);
    });
  });
}
