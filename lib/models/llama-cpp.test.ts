import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeTinyModel } from "../../test/helpers/tiny-gguf";
import type { ModelConfig } from "../config/config-types";
import { isGenserveError } from "../errors";
import { GrammarWorkerPool } from "../grammar/grammar-pool";
import { createLlamaCppModel, type LocalModelClient } from "./llama-cpp";

// The llama.cpp adapter in-process, on a tiny random-weight model written here: preflight counts,
// refusals before any decoding, and generation under a grammar.

let model: LocalModelClient;
const grammars = new GrammarWorkerPool(path.join(import.meta.dirname, "../grammar/grammar-worker.mjs"), { size: 1, timeoutMs: 10_000 });
beforeAll(async () => {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "genserve-llama-")), "tiny.gguf");
  writeTinyModel(file);
  const config: ModelConfig = { alias: "tiny", provider: "llama-cpp", model: "tiny.gguf", path: file, parallel: 1, queue: 1, threads: 1, pricing: { input: 0, output: 0 }, structuredOutputs: false, contextWindow: 256, vision: false };
  model = createLlamaCppModel(config, { file: { ok: true, file }, grammars });
  await model.warm();
}, 60_000);
afterAll(async () => {
  await model?.dispose();
  await grammars.close();
});

const request = (input: string, schema?: Record<string, unknown>) => ({ system: "Reply with JSON.", messages: [{ role: "user" as const, content: input }], maxOutputTokens: 64, ...(schema && { json: { schema } }) });

describe("llama.cpp adapter", () => {
  it("counts a prompt with the model's tokenizer and template, and caps the output at what the window leaves", async () => {
    expect(model.status).toMatchObject({ state: "ready", contextSize: 256 });
    const short = await model.preflight!(request("hi"));
    const long = await model.preflight!(request("hi ".repeat(40)));
    expect(short!.promptTokens).toBeGreaterThan(10);
    expect(long!.promptTokens).toBeGreaterThan(short!.promptTokens + 40);
    expect(short).toMatchObject({ contextWindow: 256, maxOutputTokens: 64 });
    const tight = await model.preflight!(request("x".repeat(200)));
    expect(tight!.maxOutputTokens).toBe(256 - tight!.promptTokens);
    expect((await model.preflight!(request("x".repeat(400))))!.maxOutputTokens).toBeLessThanOrEqual(0);
  });

  it("refuses a schema no value satisfies in preflight, before any decoding", async () => {
    const error = await model.preflight!(request("x", { type: "object", properties: { a: false }, required: ["a"] })).catch((e: unknown) => e);
    expect(isGenserveError(error) && { code: error.code, errors: error.errors }).toEqual({ code: "validation_failed", errors: [{ path: "/schema", message: "admits no value" }] });
  });

  it("generates under the schema's grammar and reports its decoding and tokens", async () => {
    const schema = { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"], additionalProperties: false };
    const result = await model.generate({ ...request("go", schema), abortSignal: new AbortController().signal });
    expect(JSON.parse(result.text)).toEqual({ ok: expect.any(Boolean) });
    expect(result.decoding).toBe("grammar");
    expect(result.usage.outputTokens).toBeGreaterThan(0);
  });
});
