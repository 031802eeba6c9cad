import { describe, expect, it } from "vitest";
import { parseConfigText } from "../config/load";
import type { GrammarCompiler } from "../grammar/grammar-pool";
import type { ModelFile } from "./model-source";
import { ModelRegistry } from "./model-registry";

const SOURCE = "http://127.0.0.1:9/model.gguf";
const config = () =>
  parseConfigText(
    `models:
  local:
    provider: llama-cpp
    path: ${SOURCE}
  remote:
    provider: openai-compatible
    baseURL: http://127.0.0.1:9/v1
    model: m
workflows:
  w:
    model: local
`,
    "genserve.yaml",
    {},
  );

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe("ModelRegistry.retryDownload", () => {
  it("downloads once however many ask, shows progress, then the new failure", async () => {
    const calls: string[] = [];
    const pending = deferred<ModelFile>();
    const registry = new ModelRegistry(config(), {
      localFiles: { local: { ok: false, detail: "first failure", fix: "fix" } },
      grammars: {} as GrammarCompiler,
      download: (source, onProgress) => {
        calls.push(source);
        onProgress({ file: "model.gguf", downloadedBytes: 5, totalBytes: 10, bytesPerSecond: 1, etaSeconds: 5 });
        return pending.promise;
      },
    });
    const status = () => registry.statuses().find((m) => m.alias === "local")!.status;
    expect(status()).toMatchObject({ state: "unavailable", detail: "first failure" });
    expect(registry.retryDownload("local").status).toMatchObject({ state: "downloading" });
    expect(registry.retryDownload("local").status).toEqual({ state: "downloading", downloadedBytes: 5, totalBytes: 10 });
    expect(calls).toEqual([SOURCE]);
    pending.resolve({ ok: false, detail: "second failure", fix: "fix" });
    await expect.poll(() => status().state).toBe("unavailable");
    expect(status()).toMatchObject({ detail: "second failure" });
    expect(calls).toHaveLength(1);
  });

  it("refuses what cannot be retried: an unknown alias, a remote model, no downloader", () => {
    const registry = new ModelRegistry(config(), { localFiles: { local: { ok: false, detail: "d", fix: "f" } }, grammars: {} as GrammarCompiler });
    expect(() => registry.retryDownload("nope")).toThrow(expect.objectContaining({ code: "not_found" }));
    expect(() => registry.retryDownload("remote")).toThrow(expect.objectContaining({ code: "conflict" }));
    expect(() => registry.retryDownload("local")).toThrow(expect.objectContaining({ code: "conflict" }));
  });
});
