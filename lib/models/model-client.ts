import "server-only";
import type { DecodingMode } from "../domain/run-vocabulary";

/**
 * genserve's own model interface. The run pipeline sees only this; adapters (AI SDK providers,
 * llama.cpp) implement it.
 */

export type MessagePart = { type: "text"; text: string } | { type: "image"; image: Uint8Array; mediaType: string };

export interface ChatMessage {
  role: "user" | "assistant";
  /** Text, or (user turns with images) text and image parts. */
  content: string | MessagePart[];
}

/** The text of a message, images left out. */
export const messageText = (content: ChatMessage["content"]): string =>
  typeof content === "string" ? content : content.map((p) => (p.type === "text" ? p.text : "")).join("");

export interface JsonOutputSpec {
  /** The JSON Schema the output must follow (already screened and compiled by genserve). */
  schema: Record<string, unknown>;
  /** The schema's canonical hash when the caller has it already (adapters cache by it). */
  hash?: string;
  name?: string;
  description?: string;
}

export interface ModelRequest {
  system: string;
  messages: ChatMessage[];
  temperature?: number;
  maxOutputTokens?: number;
  /** Present for object operations: ask the provider for native structured output. */
  json?: JsonOutputSpec;
  abortSignal: AbortSignal;
  /** Whose run this is (the API key's id): a local model shares its lanes fairly between owners. */
  owner?: string;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}


export interface ModelResult {
  text: string;
  usage: TokenUsage;
  /** The model id as the provider reported it, when it did. */
  modelId?: string;
  finishReason: string;
  /** Set by adapters that know; the pipeline fills it in otherwise. */
  decoding?: DecodingMode;
  /** What the adapter fell back from for this call (recorded on the run). */
  warnings?: string[];
}

export type ModelStreamPart = { type: "text"; text: string } | ({ type: "finish" } & Omit<ModelResult, "text">);

export interface ModelCapabilities {
  /** The provider constrains output to the JSON Schema itself. */
  nativeStructuredOutput: boolean;
  /** Structured output must have an object at the top level (OpenAI, Anthropic). */
  objectRootOnly: boolean;
}

export interface PromptMeasure {
  promptTokens: number;
  contextWindow: number;
  /** The output tokens the engine will allow: the request's limit (or its default), cut to what the window leaves (≤ 0: none). */
  maxOutputTokens: number;
}

/** How a model holds outputs to a schema, said before any run (the playground's schema lint). */
export interface SchemaSupport {
  /**
   * grammar: the local engine samples under a grammar compiled from the schema; provider: the
   * provider's structured output (`strict` when it constrains decoding to the schema); prompt: the
   * schema is in the prompt only. In every mode genserve validates each output and retries.
   */
  mode: "grammar" | "provider" | "prompt";
  /** Every keyword is enforced while generating (a grammar for the whole schema). */
  exact: boolean;
  /** OpenAI only: whether strict mode is used. */
  strict?: boolean;
  /** What is left to validation after generation (grammar), or what keeps strict mode off (provider), as `what at /pointer`. */
  notes: string[];
}

export interface ModelClient {
  readonly alias: string;
  /** The configured model id (used as model.name when the provider reports none). */
  readonly modelId: string;
  readonly capabilities: ModelCapabilities;
  /**
   * Checks a request before any run exists. Throws a 4xx for one that can never succeed on this
   * model (a schema no value satisfies); returns the prompt's exact size in the model's own tokens
   * (its tokenizer and chat template) where the engine can count it (the local engine, once its
   * model is loaded), else undefined. Adapters that cannot check anything leave it out.
   */
  preflight?(request: Omit<ModelRequest, "abortSignal">): Promise<PromptMeasure | undefined>;
  /** How this model would hold outputs to the schema (may throw 400 for a schema no value satisfies). */
  schemaSupport(json: JsonOutputSpec): Promise<SchemaSupport>;
  generate(request: ModelRequest): Promise<ModelResult>;
  /** Yields text deltas, then exactly one finish part; throws on failure. */
  stream(request: ModelRequest): AsyncIterable<ModelStreamPart>;
}
