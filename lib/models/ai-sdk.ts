import "server-only";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, streamText, type LanguageModel, type Output, type ModelMessage } from "ai";
import { createOllama } from "ollama-ai-provider-v2";
import type { ModelConfig } from "../config/types";
import { StreamUnwrapper, unwrapText, wrapSchema } from "./envelope";
import { toModelError } from "./errors";
import { fitsOpenAIStrict, openAIStrictProblems } from "./openai-strict";
import { messageText, type ModelCapabilities, type ModelClient, type ModelRequest, type ModelResult, type ModelStreamPart } from "./types";

type ProviderOptions = Parameters<typeof generateText>[0]["providerOptions"];

interface Adapter {
  model: LanguageModel;
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

/** Asks for the provider's native JSON-Schema output but returns the raw text: genserve validates. */
function rawJsonOutput(schema: Record<string, unknown>, name?: string, description?: string): Output.Output<string, string, never> {
  return {
    name: "json",
    responseFormat: Promise.resolve({ type: "json" as const, schema: schema as never, name, description }),
    parseCompleteOutput: async ({ text }) => text,
    // streamText holds text deltas back until this yields a new partial value; handing back the
    // accumulated text (no parsing) releases every delta as it arrives.
    parsePartialOutput: async ({ text }) => ({ partial: text }),
    createElementStreamTransform: () => undefined,
  };
}

/**
 * A model served through a Vercel AI SDK provider; `fetch` is the one it calls the provider with
 * (default: the global one).
 */
export function createAiSdkModel(config: ModelConfig, options: { fetch?: typeof globalThis.fetch } = {}): ModelClient {
  const adapter = buildAdapter(config, options.fetch);

  const prepare = (request: ModelRequest) => {
    const wrap = request.json !== undefined && adapter.capabilities.objectRootOnly && request.json.schema.type !== "object";
    const schema = request.json ? (wrap ? wrapSchema(request.json.schema) : request.json.schema) : undefined;
    const messages: ModelMessage[] = request.messages.map((m): ModelMessage =>
      typeof m.content === "string"
        ? { role: m.role, content: m.content }
        : m.role === "user"
          ? { role: "user", content: m.content.map((p) => (p.type === "text" ? p : { type: "image" as const, image: p.image, mediaType: p.mediaType })) }
          : { role: "assistant", content: messageText(m.content) },
    );
    return {
      wrap,
      call: {
        model: adapter.model,
        system: request.system || undefined,
        messages,
        temperature: request.temperature,
        maxOutputTokens: request.maxOutputTokens,
        abortSignal: request.abortSignal,
        // genserve retries (within the workflow's retry budget and deadline), never the SDK on its own.
        maxRetries: 0,
        providerOptions: adapter.providerOptions(schema),
        ...(schema && adapter.capabilities.nativeStructuredOutput
          ? { output: rawJsonOutput(schema, request.json?.name, request.json?.description) }
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
        const result = await generateText(call);
        return {
          text: wrap ? unwrapText(result.text) : result.text,
          usage: { inputTokens: result.totalUsage.inputTokens ?? 0, outputTokens: result.totalUsage.outputTokens ?? 0 },
          modelId: result.response.modelId || undefined,
          finishReason: result.finishReason,
        };
      } catch (error) {
        throw toModelError(error, request.abortSignal);
      }
    },

    async *stream(request): AsyncIterable<ModelStreamPart> {
      const { wrap, call } = prepare(request);
      const unwrapper = wrap ? new StreamUnwrapper() : null;
      let failure: unknown;
      const result = streamText({ ...call, onError: ({ error }) => void (failure ??= error) });
      try {
        for await (const part of result.fullStream) {
          if (part.type === "text-delta") {
            const text = unwrapper ? unwrapper.push(part.text) : part.text;
            if (text) yield { type: "text", text };
          } else if (part.type === "error") {
            throw part.error;
          } else if (part.type === "abort") {
            throw failure ?? new DOMException("aborted", "AbortError");
          } else if (part.type === "finish") {
            const rest = unwrapper?.end();
            if (rest) yield { type: "text", text: rest };
            const response = await result.response;
            yield {
              type: "finish",
              usage: { inputTokens: part.totalUsage.inputTokens ?? 0, outputTokens: part.totalUsage.outputTokens ?? 0 },
              modelId: response.modelId || undefined,
              finishReason: part.finishReason,
            };
          }
        }
        if (failure !== undefined) throw failure;
      } catch (error) {
        throw toModelError(error, request.abortSignal);
      }
    },
  };
}
