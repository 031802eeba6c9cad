import "server-only";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NO_LIMITS } from "../domain/key-limits";
import type { ContractStores } from "./contract-evaluations";
import type { Store } from "./store-types";

/**
 * The storage contract of projects, run against every backend: projects and their keys, catalog
 * entries and labels named per project, lists scoped to a project through their keys, and
 * migration 25 moving what an older install held into the default project, losing nothing.
 */
export function projectContract(name: string, open: ContractStores) {
  let store: Store;
  const at = (ms: number) => new Date(Date.UTC(2026, 10, 26, 0, 0, 0, ms)).toISOString();
  const key = (id: string, projectId: string, role: "viewer" | "editor" | "admin" = "editor") => ({
    id,
    name: id,
    hash: id.padEnd(64, "h"),
    prefix: "gs_k",
    admin: role === "admin",
    role,
    projectId,
    createdAt: at(0),
    lastUsedAt: null,
    revokedAt: null,
    webhookSecret: "whsec_test",
    limits: NO_LIMITS,
  });
  describe(`${name} store: projects`, () => {
    beforeEach(async () => {
      store = await open.first();
    });
    afterEach(async () => {
      await store.close();
      await open.cleanup?.();
    });

    it("has the default project, adds others with unique slugs, renames them, and keeps each key's project and role", async () => {
      expect(await store.projects.list()).toMatchObject([{ id: "prj_default", slug: "default" }]);
      await store.projects.insert({ id: "prj_b", slug: "beta", name: "Beta", createdAt: at(1) });
      await expect(store.projects.insert({ id: "prj_c", slug: "beta", name: "Again", createdAt: at(2) })).rejects.toMatchObject({ code: "conflict" });
      expect(await store.projects.rename("prj_b", "Beta team")).toBe(true);
      expect(await store.projects.bySlug("beta")).toMatchObject({ id: "prj_b", name: "Beta team" });
      await store.keys.insert(key("key_a", "prj_default", "admin"));
      await store.keys.insert(key("key_b", "prj_b", "viewer"));
      expect(await store.keys.get("key_b")).toMatchObject({ role: "viewer", projectId: "prj_b", admin: false });
      expect(await store.keys.get("key_a")).toMatchObject({ role: "admin", projectId: "prj_default", admin: true });
      expect((await store.keys.list("prj_b")).map((k) => k.id)).toEqual(["key_b"]);
    });

    it("names catalog entries and labels per project: the same slug is two workflows, each numbered and labelled on its own", async () => {
      await store.projects.insert({ id: "prj_b", slug: "beta", name: "Beta", createdAt: at(1) });
      await store.catalog.append("workflow", "w", { model: "m", instructions: "a1" }, "key_a", at(2));
      await store.catalog.append("workflow", "w", { model: "m", instructions: "a2" }, "key_a", at(3));
      await store.catalog.append("workflow", "w", { model: "m", instructions: "b1" }, "key_b", at(4), "prj_b");
      expect((await store.catalog.get("workflow", "w"))?.version).toBe(2);
      expect(await store.catalog.get("workflow", "w", "prj_b")).toMatchObject({ version: 1, body: { instructions: "b1" } });
      expect(await store.catalog.version("workflow", "w", 2, "prj_b")).toBeNull();
      expect((await store.catalog.latest("workflow", "prj_b")).map((v) => v.body)).toEqual([{ model: "m", instructions: "b1" }]);
      expect(await store.catalog.get("workflow", "w", "prj_elsewhere")).toBeNull();
      await store.labels.record({ slug: "w", label: "production", outcome: "moved", version: "1", keyId: "key_b", evaluationId: null, passRate: null, createdAt: at(5) }, "prj_b");
      expect(await store.labels.get("w", "production")).toBeNull();
      expect(await store.labels.get("w", "production", "prj_b")).toMatchObject({ version: "1" });
      expect(await store.catalog.latestWithLabel("w", "production")).toMatchObject({ latest: { version: 2 }, labelled: null });
      expect(await store.catalog.latestWithLabel("w", "production", "prj_b")).toMatchObject({ latest: { version: 1 }, labelled: "1" });
      expect(await store.labels.history("w")).toEqual([]);
    });

    it("lists a project's runs and evaluations through their keys", async () => {
      await store.projects.insert({ id: "prj_b", slug: "beta", name: "Beta", createdAt: at(1) });
      await store.keys.insert(key("key_a", "prj_default"));
      await store.keys.insert(key("key_b", "prj_b"));
      const run = (id: string, keyId: string) => ({ id, operation: "generate.text" as const, workflowSlug: "w", keyId, input: "x", schema: null, contextSlugs: [], attachments: [], callback: null, modelTag: "m", createdAt: at(2) });
      await store.runs.insert(run("run_01A", "key_a"));
      await store.runs.insert(run("run_01B", "key_b"));
      const bounds = { previewChars: 100, searchChars: 100, searchBytes: 1000 };
      expect((await store.runs.list({ projectId: "prj_b", limit: 10 }, bounds)).runs.map((r) => r.id)).toEqual(["run_01B"]);
      expect((await store.runs.list({ projectId: "prj_default", limit: 10 }, bounds)).runs.map((r) => r.id)).toEqual(["run_01A"]);
    });

    it.runIf(open.upgraded !== undefined)("moves an older install's keys, workflows, labels and everything owned by keys into the default project when migrating (25)", async () => {
      const old = await open.upgraded!(23, [
        `INSERT INTO api_keys (id, name, hash, prefix, admin, created_at) VALUES ('key_admin', 'a', '${"a".repeat(64)}', 'gs_a', TRUE, '${at(0)}')`,
        `INSERT INTO api_keys (id, name, hash, prefix, admin, created_at) VALUES ('key_user', 'u', '${"u".repeat(64)}', 'gs_u', FALSE, '${at(1)}')`,
        `INSERT INTO catalog_versions (kind, slug, version, body, key_id, created_at) VALUES ('workflow', 'w', 1, '{"model":"m","instructions":"one"}', 'key_admin', '${at(2)}')`,
        `INSERT INTO catalog_versions (kind, slug, version, body, key_id, created_at) VALUES ('workflow', 'w', 2, '{"model":"m","instructions":"two"}', 'key_admin', '${at(3)}')`,
        `INSERT INTO workflow_label_moves (slug, label, outcome, version, previous, key_id, created_at) VALUES ('w', 'production', 'moved', '1', NULL, 'key_admin', '${at(4)}')`,
        `INSERT INTO runs (id, operation, workflow_slug, key_id, status, input, context_slugs, attachments, created_at, updated_at) VALUES ('run_01OLD', 'generate.text', 'w', 'key_user', 'succeeded', 'x', '[]', '[]', '${at(5)}', '${at(5)}')`,
        `INSERT INTO suites (slug, key_id, version, document, created_at, updated_at) VALUES ('s', 'key_user', 1, '{"cases":[]}', '${at(6)}', '${at(6)}')`,
      ]);
      try {
        expect(await old.projects.list()).toEqual([{ id: "prj_default", slug: "default", name: "Default", createdAt: at(0) }]);
        expect(await old.keys.get("key_admin")).toMatchObject({ role: "admin", admin: true, projectId: "prj_default" });
        expect(await old.keys.get("key_user")).toMatchObject({ role: "editor", admin: false, projectId: "prj_default" });
        expect((await old.catalog.versions("workflow", "w")).map((v) => v.version)).toEqual([1, 2]);
        expect(await old.catalog.latestWithLabel("w", "production")).toMatchObject({ latest: { version: 2 }, labelled: "1" });
        // Numbering goes on in the default project.
        expect((await old.catalog.append("workflow", "w", { model: "m", instructions: "three" }, "key_admin", at(7))).version).toBe(3);
        expect((await old.runs.list({ projectId: "prj_default", limit: 10 }, { previewChars: 100, searchChars: 100, searchBytes: 1000 })).runs.map((r) => r.id)).toEqual(["run_01OLD"]);
        expect((await old.suites.list({ projectId: "prj_default" })).map((s) => s.slug)).toEqual(["s"]);
      } finally {
        await old.close();
      }
    });
  });
}
