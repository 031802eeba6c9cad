import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, DEFAULT_LOCAL_MODEL, loadConfig, parseConfigText } from "./load";

const FILE = "/etc/genserve/genserve.yaml";
const parse = (text: string, env: Record<string, string> = {}) => parseConfigText(text, FILE, env);
const problems = (text: string, env: Record<string, string> = {}) => {
  try {
    parse(text, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(FILE);
    return (error as ConfigError).problems;
  }
  throw new Error("expected a ConfigError");
};

const VALID = `
models:
  fast:
    provider: openai-compatible
    baseURL: http://127.0.0.1:11434/v1
    model: qwen2.5:7b
    apiKey: \${OPENAI_API_KEY}
    pricing: { input: 0.15, output: 0.60 }
workflows:
  extract-invoice:
    description: Extract the fields of an invoice
    model: fast
    instructions: |
      You extract invoice fields.
    temperature: 0
    maxOutputTokens: 1024
    retries: 2
    timeoutMs: 60000
    contexts: [invoice-rules]
contexts:
  invoice-rules:
    title: Invoice rules
    content: Amounts are in EUR unless stated.
network:
  allowPrivate: false
`;

describe("configuration", () => {
  it("reads the documented shape, interpolating environment variables", () => {
    const config = parse(VALID, { OPENAI_API_KEY: "sk-1" });
    expect(config.models.fast).toMatchObject({ alias: "fast", provider: "openai-compatible", apiKey: "sk-1", pricing: { input: 0.15, output: 0.6 } });
    expect(config.workflows["extract-invoice"]).toMatchObject({ slug: "extract-invoice", model: "fast", retries: 2, timeoutMs: 60000, contexts: ["invoice-rules"] });
    expect(config.contexts["invoice-rules"]).toEqual({ slug: "invoice-rules", title: "Invoice rules", content: "Amounts are in EUR unless stated." });
    expect(config.network.allowPrivate).toBe(false);
    expect(config.limits.bodyBytes).toBe(32 * 1024 * 1024);
    expect(Object.isFrozen(config.models.fast)).toBe(true);
  });

  it("applies defaults for optional workflow fields and prices", () => {
    const config = parse("models:\n  m: { provider: ollama, model: llama3 }\nworkflows:\n  w: { model: m }\n");
    expect(config.workflows.w).toMatchObject({ retries: 2, timeoutMs: 60000, instructions: "", description: "", contexts: [] });
    expect(config.models.m!.pricing).toEqual({ input: 0, output: 0 });
  });

  it("finds no inherited member under a caller's name (toString, __proto__)", () => {
    const config = parse(VALID, { OPENAI_API_KEY: "sk-1" });
    for (const name of ["toString", "constructor", "__proto__", "hasOwnProperty"]) {
      expect(config.workflows[name], name).toBeUndefined();
      expect(config.models[name], name).toBeUndefined();
      expect(config.contexts[name], name).toBeUndefined();
    }
    expect(problems("models:\n  m: { provider: ollama, model: x }\nworkflows:\n  w: { model: m, contexts: [toString] }\n")).toContainEqual({
      path: "workflows.w.contexts.0",
      message: expect.stringContaining('unknown context "toString"'),
    });
  });

  it("names the path and reason of each bad value", () => {
    expect(problems(VALID)).toEqual([{ path: "models.fast.apiKey", message: "environment variable OPENAI_API_KEY is not set" }]);
    expect(problems("models:\n  m: { provider: nope, model: x }\n")).toContainEqual({ path: "models.m.provider", message: expect.stringContaining('unknown provider "nope"') });
    expect(problems("models:\n  m: { provider: ollama }\n")).toContainEqual({ path: "models.m.model", message: "is required" });
    // A value of the wrong type is not "required": it is named as what it is not.
    expect(problems("models:\n  m: { provider: ollama, model: x }\nlimits:\n  runsPerMinute: lots\n")).toContainEqual({ path: "limits.runsPerMinute", message: expect.not.stringContaining("required") });
    expect(problems("workflows:\n  w: { model: ghost }\n")).toContainEqual({ path: "workflows.w.model", message: 'unknown model alias "ghost" (none are defined)' });
    expect(problems("models:\n  m: { provider: ollama, model: x }\nworkflows:\n  w: { model: m, contexts: [nope] }\n")).toContainEqual({
      path: "workflows.w.contexts.0",
      message: 'unknown context "nope" (none are defined)',
    });
    expect(problems("contexts:\n  c: { title: x }\n")).toContainEqual({ path: "contexts.c", message: "needs exactly one of content or file" });
    expect(problems("surprise: 1\n")).toContainEqual({ path: "", message: 'unknown field "surprise"' });
    expect(problems("models: [\n")[0]!.message).toMatch(/not valid YAML/);
    expect(problems("models:\n  fast: { provider: openai-compatible, model: x }\n")).toContainEqual({ path: "models.fast.baseURL", message: "is required for provider openai-compatible" });
  });

  it("reads context files relative to the configuration file, and names one it cannot read", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "genserve-config-"));
    writeFileSync(path.join(dir, "rules.md"), "Rule one.");
    writeFileSync(path.join(dir, "genserve.yaml"), "contexts:\n  rules: { file: ./rules.md }\n  gone: { file: ./gone.md }\n");
    try {
      loadConfig({ cwd: dir, env: {} });
      throw new Error("expected a ConfigError");
    } catch (error) {
      expect((error as ConfigError).problems).toEqual([{ path: "contexts.gone.file", message: `cannot read ${path.join(dir, "gone.md")}: ENOENT` }]);
    }
    writeFileSync(path.join(dir, "genserve.yaml"), "contexts:\n  rules: { file: ./rules.md }\n");
    expect(loadConfig({ cwd: dir, env: {} }).contexts.rules!.content).toBe("Rule one.");
  });

  it("without a file: the embedded local model and a `default` workflow (unless a named file is missing)", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "genserve-config-"));
    const config = loadConfig({ cwd: dir, env: {} });
    expect(config.file).toBeNull();
    expect(config.models.local).toMatchObject({ provider: "llama-cpp", path: DEFAULT_LOCAL_MODEL, parallel: 2, queue: 32 });
    expect(config.workflows.default).toMatchObject({ model: "local" });
    // --model: a relative file is resolved against the working directory; URIs are kept.
    expect(loadConfig({ cwd: dir, env: {}, model: "m.gguf" }).models.local!.path).toBe(path.join(dir, "m.gguf"));
    expect(loadConfig({ cwd: dir, env: {}, model: "hf:a/b:Q4_K_M" }).models.local!.path).toBe("hf:a/b:Q4_K_M");
    expect(() => loadConfig({ cwd: dir, env: {}, file: "missing.yaml" })).toThrow(/file not found/);
  });

  it("llama-cpp models need a path, resolved against the file's directory", () => {
    expect(problems("models:\n  l: { provider: llama-cpp }\n")).toContainEqual({ path: "models.l.path", message: expect.stringContaining("is required for provider llama-cpp") });
    const config = parseConfigText("models:\n  l: { provider: llama-cpp, path: ./w/m.gguf, parallel: 3 }\n", "/etc/gs/genserve.yaml", {});
    expect(config.models.l).toMatchObject({ path: "/etc/gs/w/m.gguf", model: "m.gguf", parallel: 3 });
    // --model with a file adds `local` and a `default` workflow, keeping the file's own.
    const withModel = parseConfigText("models:\n  l: { provider: llama-cpp, path: ./m.gguf }\nworkflows:\n  w: { model: l }\n", "/etc/gs/genserve.yaml", {}, "/models/x.gguf");
    expect(Object.keys(withModel.workflows).sort()).toEqual(["default", "w"]);
    expect(withModel.models.local!.path).toBe("/models/x.gguf");
  });

  it("supports ${NAME:-default}", () => {
    const config = parse("models:\n  m: { provider: ollama, model: '${MODEL:-llama3}' }\n");
    expect(config.models.m!.model).toBe("llama3");
  });

  it("loads the example configuration the project ships, and takes a section left empty as its defaults", () => {
    const example = readFileSync(path.resolve(import.meta.dirname, "../../genserve.example.yaml"), "utf8");
    const config = parse(example, { OPENAI_API_KEY: "sk-x" });
    expect(config.workflows["extract-invoice"]?.example?.input).toMatch(/^Invoice INV-7/);
    expect(parse("server:\nlimits:\nnetwork:\n").limits.bodyBytes).toBeGreaterThan(0);
    expect(problems("workflows:\n  w:\n    model: m\n    example: { schema: {} }\n").map((p) => p.path)).toEqual(expect.arrayContaining(["workflows.w.example.input"]));
  });
});

describe("security.secretsKey", () => {
  it("names a file (relative to the configuration) or an environment variable, read here once; absent it is null", () => {
    expect(parse(`${VALID}\nsecurity:\n  secretsKey: { file: keys/genserve.key }\n`, { OPENAI_API_KEY: "k" }).security.secretsKey).toEqual({ kind: "file", path: "/etc/genserve/keys/genserve.key" });
    expect(parse(`${VALID}\nsecurity:\n  secretsKey: { env: GS_KEY }\n`, { OPENAI_API_KEY: "k", GS_KEY: "abc" }).security.secretsKey).toEqual({ kind: "env", name: "GS_KEY", value: "abc" });
    expect(parse(VALID, { OPENAI_API_KEY: "k" }).security.secretsKey).toBeNull();
    expect(problems(`${VALID}\nsecurity:\n  secretsKey: { env: "not a name" }\n`, { OPENAI_API_KEY: "k" })).toContainEqual({ path: "security.secretsKey.env", message: "must be an environment variable's name" });
  });
});
