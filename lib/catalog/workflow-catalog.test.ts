import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseConfigText } from "../config/load";
import { isGenserveError } from "../errors";
import { openSqliteStore } from "../store/sqlite";
import type { Store } from "../store/store-types";
import { Catalog } from "./workflow-catalog";

const config = parseConfigText(
  `
models:
  m: { provider: openai-compatible, baseURL: "http://127.0.0.1:9/v1", model: x }
workflows:
  fixed: { model: m }
contexts:
  rules: { content: "Be exact." }
`,
  "/tmp/genserve.yaml",
  {},
);

let store: Store;
let catalog: Catalog;
beforeEach(() => {
  store = openSqliteStore(mkdtempSync(path.join(os.tmpdir(), "genserve-catalog-")));
  catalog = new Catalog(config, store);
});
afterEach(() => store.close());

const codeOf = async (promise: Promise<unknown>) => {
  const error = await promise.then(() => null, (e: unknown) => e);
  return isGenserveError(error) ? { code: error.code, errors: error.errors } : error;
};

describe("Catalog", () => {
  it("serves configuration entries as version 'config', read-only", async () => {
    expect(await catalog.workflow("fixed")).toMatchObject({ slug: "fixed", model: "m", version: "config", source: "config" });
    expect(await codeOf(catalog.putWorkflow("fixed", { model: "m" }, "key_1"))).toMatchObject({ code: "conflict" });
    expect(await codeOf(catalog.delete("context", "rules", "key_1"))).toMatchObject({ code: "conflict" });
  });

  it("versions API entries on every change, validates them, and lists both kinds", async () => {
    expect((await catalog.putContext("tone", { content: "Be brief." }, "key_1")).created).toBe(true);
    const changed = await catalog.putContext("tone", { title: "Tone", content: "Be briefer." }, "key_1");
    expect(changed).toMatchObject({ created: false, entry: { slug: "tone", title: "Tone", version: "2", source: "api" } });
    expect(await codeOf(catalog.putWorkflow("w", { model: "nope", contexts: ["tone", "missing"] }, "key_1"))).toMatchObject({
      code: "validation_failed",
      errors: [{ path: "/model", message: 'unknown model alias "nope"' }, { path: "/contexts/1", message: 'unknown context "missing"' }],
    });
    await catalog.putWorkflow("w", { model: "m", contexts: ["tone", "tone", "rules"] }, "key_1");
    expect(await catalog.workflow("w")).toMatchObject({ contexts: ["tone", "rules"], version: "1" });
    expect((await catalog.workflows()).map((w) => `${w.slug}@${w.version}`)).toEqual(["fixed@config", "w@1"]);
    await catalog.delete("workflow", "w", "key_1");
    expect(await catalog.workflow("w")).toBeNull();
    expect(await codeOf(catalog.delete("workflow", "w", "key_1"))).toMatchObject({ code: "workflow_not_found" });
  });

  it("finds nothing under names of Object members", async () => {
    for (const name of ["toString", "constructor", "__proto__", "valueOf"]) {
      expect(await catalog.workflow(name), name).toBeNull();
      expect(await catalog.context(name), name).toBeNull();
    }
    expect(await codeOf(catalog.putWorkflow("w", { model: "toString" }, "key_1"))).toMatchObject({
      code: "validation_failed",
      errors: [{ path: "/model", message: 'unknown model alias "toString"' }],
    });
  });
});
