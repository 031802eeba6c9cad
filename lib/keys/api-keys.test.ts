import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { NO_LIMITS } from "../domain/key-limits";
import { openSqliteStore } from "../store/sqlite";
import { storageFull } from "../store/storage-faults";
import type { Store } from "../store/store-types";
import { authenticate, createKey, hashKey } from "./api-keys";

let store: Store;
afterEach(async () => store?.close());

describe("API keys", () => {
  it("creates random prefixed keys and stores only their hash", async () => {
    store = openSqliteStore(mkdtempSync(path.join(os.tmpdir(), "genserve-keys-")));
    const { key, record } = await createKey(store, { name: "ci", admin: false });
    expect(key).toMatch(/^gs_[A-Za-z0-9_-]{43}$/); // 256 random bits
    expect(record.hash).toBe(hashKey(key));
    const stored = await store.keys.get(record.id);
    expect(JSON.stringify(stored)).not.toContain(key);
    expect((await createKey(store, { name: "ci", admin: false })).key).not.toBe(key);
  });

  it("authenticates, records last use, and refuses revoked or unknown keys", async () => {
    store = openSqliteStore(mkdtempSync(path.join(os.tmpdir(), "genserve-keys-")));
    const { key, record } = await createKey(store, { name: "a", admin: true });
    expect(await authenticate(store, key)).toEqual({ keyId: record.id, name: "a", admin: true, role: "admin", projectId: "prj_default", limits: NO_LIMITS, via: "key" });
    expect((await store.keys.get(record.id))?.lastUsedAt).not.toBeNull();
    await expect(authenticate(store, null)).rejects.toMatchObject({ code: "unauthorized" });
    await expect(authenticate(store, key.slice(0, -1) + (key.endsWith("A") ? "B" : "A"))).rejects.toMatchObject({ code: "unauthorized" });
    expect(await store.keys.revoke(record.id, new Date().toISOString())).toBe(true);
    expect(await store.keys.revoke(record.id, new Date().toISOString())).toBe(false);
    await expect(authenticate(store, key)).rejects.toMatchObject({ code: "unauthorized" });
    expect((await store.keys.list()).every((k) => k.revokedAt !== null)).toBe(true);
  });

  it("authenticates when recording the key's use fails (a full disk): bookkeeping never fails a request", async () => {
    store = openSqliteStore(mkdtempSync(path.join(os.tmpdir(), "genserve-keys-")));
    const { key, record } = await createKey(store, { name: "a", admin: false });
    const full: Store = { ...store, keys: { ...store.keys, touch: async () => Promise.reject(storageFull()) } };
    expect(await authenticate(full, key)).toMatchObject({ keyId: record.id });
    expect((await store.keys.get(record.id))?.lastUsedAt).toBeNull(); // tried again on a later request
  });
});
