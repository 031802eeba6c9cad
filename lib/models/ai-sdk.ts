import "server-only";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3Prompt, LanguageModelV3StreamPart, LanguageModelV3Usage, SharedV3Warning } from "@ai-sdk/provider";
import { createOllama } from "ollama-ai-provider-v2";
import type { ModelConfig } from "../config/config-types";
import { StreamUnwrapper, unwrapText, wrapSchema } from "./envelope";
import { toModelError } from "./provider-errors";
import { fitsOpenAIStrict, openAIStrictProblems } from "./openai-strict";
import { messageText, type ModelCapabilities, type ModelClient, type ModelRequest, type ModelResult, type ModelStreamPart } from "./model-client";

type ProviderOptions = LanguageModelV3CallOptions["providerOptions"];

interface Adapter {
  model: LanguageModelV3;
  capabilities: ModelCapabilities;
  providerOptions(schema: Record<string, unknown> | undefined): ProviderOptions;
}

function buildAdapter(config: ModelConfig, fetch: typeof globalThis.fetch | undefined): Adapter {
  const common = { apiKey: config.apiKey, baseURL: config.baseURL, headers: config.headers, fetch };
  switch (config.provider) {
    case "openai-compatible":
      return {
        model: createOpenAICompatible({
          name: config.alias,
          baseURL: config.baseURL!,
          apiKey: config.apiKey,
          headers: config.headers,
          fetch,
          includeUsage: true,
          supportsStructuredOutputs: config.structuredOutputs,
        }).chatModel(config.model),
        capabilities: { nativeStructuredOutput: config.structuredOutputs, objectRootOnly: false },
        providerOptions: () => undefined,
      };
    case "openai":
      return {
        model: createOpenAI(common).responses(config.model),
        capabilities: { nativeStructuredOutput: config.structuredOutputs, objectRootOnly: true },
        providerOptions: (schema) => ({ openai: { strictJsonSchema: schema !== undefined && fitsOpenAIStrict(schema) } }),
      };
    case "anthropic":
      return {
        model: createAnthropic(common)(config.model),
        capabilities: { nativeStructuredOutput: config.structuredOutputs, objectRootOnly: true },
        providerOptions: () => undefined,
      };
    case "ollama":
      return {
        model: createOllama({ baseURL: config.baseURL, headers: config.headers, fetch })(config.model),
        capabilities: { nativeStructuredOutput: config.structuredOutputs, objectRootOnly: false },
        providerOptions: () => undefined,
      };
    case "llama-cpp":
      throw new Error("llama-cpp models are served by lib/models/llama-cpp.ts, not the AI SDK");
  }
}

/** The provider's usage in genserve's terms (a provider that reports none counts 0). */
const usageOf = (usage: LanguageModelV3Usage) => ({ inputTokens: usage.inputTokens.total ?? 0, outputTokens: usage.outputTokens.total ?? 0 });

/**
 * Provider warnings (an unsupported setting, say) go where the AI SDK's own helpers send them: the
 * runtime routes that hook into the JSON log (lib/server/runtime.ts).
 */
function reportWarnings(model: LanguageModelV3, warnings: readonly SharedV3Warning[] | undefined): void {
  const hook = (globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS;
  if (warnings && warnings.length > 0 && typeof hook === "function") hook({ warnings, provider: model.provider, model: model.modelId });
}

/**
 * A model served through a Vercel AI SDK provider; `fetch` is the one it calls the provider with
 * (default: the global one).
 *
 * The provider is called through its model interface (`doGenerate`, `doStream`: the AI SDK's
 * provider specification), not the SDK's `generateText`/`streamText`. Those add what genserve does
 * not use (tools, steps, retries, telemetry, output parsing) and cost, measured on a fast upstream
 * (docs/benchmarks.md), about half of a generate run's CPU and two thirds of an open stream's memory
 * (a dozen web streams per call). genserve builds the provider prompt itself from its own, already
 * validated messages.
 */
export function createAiSdkModel(config: ModelConfig, options: { fetch?: typeof globalThis.fetch } = {}): ModelClient {
  const adapter = buildAdapter(config, options.fetch);

  const prepare = (request: ModelRequest): { wrap: boolean; call: LanguageModelV3CallOptions } => {
    const wrap = request.json !== undefined && adapter.capabilities.objectRootOnly && request.json.schema.type !== "object";
    const schema = request.json ? (wrap ? wrapSchema(request.json.schema) : request.json.schema) : undefined;
    const prompt: LanguageModelV3Prompt = [
      ...(request.system ? [{ role: "system" as const, content: request.system }] : []),
      ...request.messages.map((m): LanguageModelV3Prompt[number] =>
        m.role === "user"
          ? {
              role: "user",
              content:
                typeof m.content === "string"
                  ? [{ type: "text", text: m.content }]
                  : m.content.map((p) => (p.type === "text" ? { type: "text" as const, text: p.text } : { type: "file" as const, data: p.image, mediaType: p.mediaType })),
            }
          : { role: "assistant", content: [{ type: "text", text: typeof m.content === "string" ? m.content : messageText(m.content) }] },
      ),
    ];
    return {
      wrap,
      call: {
        prompt,
        temperature: request.temperature,
        maxOutputTokens: request.maxOutputTokens,
        abortSignal: request.abortSignal,
        providerOptions: adapter.providerOptions(schema),
        // The provider's native JSON-Schema output where it has one; the raw text comes back either
        // way, and genserve validates it.
        ...(schema && adapter.capabilities.nativeStructuredOutput
          ? { responseFormat: { type: "json" as const, schema: schema as never, name: request.json?.name, description: request.json?.description } }
          : {}),
      },
    };
  };

  return {
    alias: config.alias,
    modelId: config.model,
    capabilities: adapter.capabilities,

    async schemaSupport({ schema }) {
      if (!adapter.capabilities.nativeStructuredOutput) return { mode: "prompt", exact: false, notes: [] };
      if (config.provider !== "openai") return { mode: "provider", exact: false, notes: [] };
      const notes = openAIStrictProblems(schema);
      return { mode: "provider", exact: false, strict: notes.length === 0, notes };
    },

    async generate(request): Promise<ModelResult> {
      const { wrap, call } = prepare(request);
      try {
        const result = await adapter.model.doGenerate(call);
        reportWarnings(adapter.model, result.warnings);
        const text = result.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
        return {
          text: wrap ? unwrapText(text) : text,
          usage: usageOf(result.usage),
          modelId: result.response?.modelId || undefined,
          finishReason: result.finishReason.unified,
        };
      } catch (error) {
        throw toModelError(error, request.abortSignal);
      }
    },

    async *stream(request): AsyncIterable<ModelStreamPart> {
      const { wrap, call } = prepare(request);
      const unwrapper = wrap ? new StreamUnwrapper() : null;
      try {
        const { stream } = await adapter.model.doStream(call);
        let modelId: string | undefined;
        // A consumer that stops early (an output that can never validate) ends this loop, which
        // cancels the provider's stream; it also aborts the call's signal (lib/runs/attempt.ts).
        // Node's web streams are async-iterable; the DOM typings this project compiles with lack it.
        for await (const part of stream as unknown as AsyncIterable<LanguageModelV3StreamPart>) {
          if (part.type === "text-delta") {
            const text = unwrapper ? unwrapper.push(part.delta) : part.delta;
            if (text) yield { type: "text", text };
          } else if (part.type === "response-metadata") {
            modelId = part.modelId || modelId;
          } else if (part.type === "stream-start") {
            reportWarnings(adapter.model, part.warnings);
          } else if (part.type === "error") {
            throw part.error;
          } else if (part.type === "finish") {
            const rest = unwrapper?.end();
            if (rest) yield { type: "text", text: rest };
            yield { type: "finish", usage: usageOf(part.usage), modelId, finishReason: part.finishReason.unified };
          }
        }
      } catch (error) {
        throw toModelError(error, request.abortSignal);
      }
    },
  };
}
