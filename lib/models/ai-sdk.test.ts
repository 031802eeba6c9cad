import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstream";
import type { ModelConfig } from "../config/config-types";
import { createAiSdkModel } from "./ai-sdk";

// The fake speaks OpenAI chat completions only: for the other providers these tests check what
// genserve sends (endpoint, schema, strictness, envelope); the HTTP suites cover full runs.
let upstream: FakeUpstream;
beforeAll(async () => void (upstream = await startFakeUpstream()));
afterAll(async () => upstream?.close());
beforeEach(() => upstream.reset());

const model = (provider: ModelConfig["provider"], extra: Partial<ModelConfig> = {}): ModelConfig => ({
  alias: "m",
  provider,
  model: "model-x",
  baseURL: upstream.url,
  apiKey: "sk-test",
  pricing: { input: 0, output: 0 },
  structuredOutputs: true,
  vision: false,
  parallel: 2,
  queue: 32,
  ...extra,
});

const request = (schema?: Record<string, unknown>) => ({
  system: "Be exact.",
  messages: [{ role: "user" as const, content: "hello" }],
  json: schema && { schema, name: "output" },
  abortSignal: AbortSignal.timeout(5_000),
});

const lastBody = () => upstream.requests.at(-1)!.body as unknown as Record<string, any>;

describe("AI SDK adapters", () => {
  it("openai-compatible: json_schema response format with the caller's schema as is", async () => {
    const client = createAiSdkModel(model("openai-compatible"));
    upstream.reply({ content: '["a"]' });
    const result = await client.generate(request({ type: "array", items: { type: "string" } }));
    expect(result.text).toBe('["a"]');
    expect(lastBody().response_format).toMatchObject({ type: "json_schema", json_schema: { schema: { type: "array", items: { type: "string" } } } });
  });

  it("openai-compatible with structuredOutputs off: no schema sent to the provider", async () => {
    const client = createAiSdkModel(model("openai-compatible", { structuredOutputs: false }));
    expect(client.capabilities.nativeStructuredOutput).toBe(false);
    upstream.reply({ content: "{}" });
    await client.generate(request({ type: "object" }));
    expect(lastBody().response_format).toBeUndefined();
  });

  it("openai: Responses API, strict only when the schema fits, arrays wrapped in an object", async () => {
    const client = createAiSdkModel(model("openai"));
    // An array of open objects does not fit strict mode.
    const openItems = { type: "array", items: { type: "object", properties: { a: { type: "string" } } } };
    await expect(client.generate(request(openItems))).rejects.toMatchObject({ code: "model_error" });
    expect(upstream.requests.at(-1)!.path).toBe("/v1/responses");
    const format = lastBody().text.format;
    expect(format).toMatchObject({ type: "json_schema", strict: false, schema: { type: "object", required: ["value"], properties: { value: { type: "array" } } } });

    const strictSchema = { type: "object", properties: { a: { type: "string" } }, required: ["a"], additionalProperties: false };
    await expect(client.generate(request(strictSchema))).rejects.toMatchObject({ code: "model_error" });
    expect(lastBody().text.format).toMatchObject({ strict: true });
  });

  it("anthropic: Messages API with the wrapped schema", async () => {
    const client = createAiSdkModel(model("anthropic"));
    await expect(client.generate(request({ type: "string", enum: ["yes", "no"] }))).rejects.toMatchObject({ code: "model_error" });
    expect(upstream.requests.at(-1)!.path).toBe("/v1/messages");
    expect(JSON.stringify(lastBody())).toContain('"enum":["yes","no"]');
    expect(upstream.requests.at(-1)!.headers["x-api-key"]).toBe("sk-test");
  });

  it("ollama: chat API with the schema as format", async () => {
    const client = createAiSdkModel(model("ollama", { baseURL: upstream.url.replace(/\/v1$/, "/api") }));
    await expect(client.generate(request({ type: "object", properties: { a: { type: "string" } } }))).rejects.toMatchObject({ code: "model_error" });
    expect(upstream.requests.at(-1)!.path).toBe("/api/chat");
    expect(lastBody().format).toMatchObject({ type: "object", properties: { a: { type: "string" } } });
  });

  it("reports a time-out as model_timeout", async () => {
    const client = createAiSdkModel(model("openai-compatible"));
    upstream.reply({ delayMs: 2_000 });
    await expect(client.generate({ ...request(), abortSignal: AbortSignal.timeout(200) })).rejects.toMatchObject({ code: "model_timeout" });
  });
});
