import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Catalog } from "../catalog/workflow-catalog";
import { parseConfigText } from "../config/load";
import { isGenserveError } from "../errors";
import type { Principal } from "../keys/api-keys";
import { openSqliteStore } from "../store/sqlite";
import type { Store } from "../store/store-types";
import { applyDraft } from "./draft";

const config = parseConfigText(
  `
models:
  m: { provider: openai-compatible, baseURL: "http://127.0.0.1:9/v1", model: x }
  n: { provider: openai-compatible, baseURL: "http://127.0.0.1:9/v1", model: y }
workflows:
  fixed: { model: m, instructions: "Saved.", temperature: 0.4, maxOutputTokens: 100, contexts: [rules] }
contexts:
  rules: { content: "Be exact." }
  extra: { content: "More." }
`,
  "/tmp/genserve.yaml",
  {},
);
const admin: Principal = { keyId: "key_admin", name: "admin", admin: true, role: "admin", projectId: "prj_default", limits: { workflows: null } as Principal["limits"], via: "key" };
const user: Principal = { ...admin, keyId: "key_user", admin: false, role: "viewer" };

let store: Store;
let catalog: Catalog;
beforeEach(() => {
  store = openSqliteStore(mkdtempSync(path.join(os.tmpdir(), "genserve-draft-")));
  catalog = new Catalog(config, store);
});
afterEach(() => store.close());

const failure = async (promise: Promise<unknown>) => {
  const error = await promise.then(() => null, (e: unknown) => e);
  return isGenserveError(error) ? { code: error.code, status: error.status, errors: error.errors } : error;
};

describe("applyDraft", () => {
  it("applies only what the draft names, null removing a limit, and records the differences", async () => {
    const base = await catalog.resolve("fixed");
    const { workflow, record } = await applyDraft({ config, catalog }, admin, base, { instructions: "Saved.\nAnd edited.", temperature: null, model: "n", contexts: ["rules", "extra", "extra"] });
    expect(workflow).toMatchObject({ slug: "fixed", version: "config", model: "n", instructions: "Saved.\nAnd edited.", maxOutputTokens: 100, contexts: ["rules", "extra"] });
    expect("temperature" in workflow).toBe(false);
    expect(record.base).toBe("config");
    expect(record.definition).toEqual({ model: "n", instructions: "Saved.\nAnd edited.", temperature: null, maxOutputTokens: 100, retries: 2, contexts: ["rules", "extra"] });
    expect(record.changes.map((c) => c.name)).toEqual(["model", "instructions", "temperature", "contexts"]);
    expect(record.instructionsDiff).toEqual([" Saved.", "+And edited."]);
    // The version itself is as it was.
    expect(await catalog.resolve("fixed")).toEqual(base);
  });

  it("refuses keys that may not edit workflows (403 at /draft), and names unknown models and contexts", async () => {
    const base = await catalog.resolve("fixed");
    expect(await failure(applyDraft({ config, catalog }, user, base, { instructions: "x" }))).toMatchObject({ code: "forbidden", status: 403, errors: [{ path: "/draft" }] });
    expect(await failure(applyDraft({ config, catalog }, admin, base, { model: "zz", contexts: ["nope"] }))).toMatchObject({
      code: "validation_failed",
      errors: [{ path: "/draft/model" }, { path: "/draft/contexts/0", message: 'unknown context "nope"' }],
    });
  });
});
