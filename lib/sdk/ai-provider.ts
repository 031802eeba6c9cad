/**
 * An AI SDK provider (`genserve/ai`): a genserve workflow as an AI SDK language model
 * (LanguageModelV3 of `@ai-sdk/provider`), so `generateObject`, `streamObject`, `generateText` and
 * `streamText` from `ai` run through genserve — its validation, retries, metering and storage — and
 * report the run's id and cost in `providerMetadata.genserve`. The workflow owns the model and its
 * settings: a call's temperature, token limit and the like are reported as unsupported warnings.
 * Browser-safe (types only from `@ai-sdk/provider`).
 */
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3GenerateResult, LanguageModelV3Prompt, LanguageModelV3StreamPart, LanguageModelV3Usage, SharedV3Warning } from "@ai-sdk/provider";
import { GenserveValidationError } from "./api-error";
import { createClient, type GenserveClient } from "./client";
import type { GenerateObjectBody, RunMetadata } from "./operations";
import type { RunStreamEvent } from "./run-stream";
import type { ClientOptions } from "./transport";

export interface GenserveModelSettings {
  /** Context slugs added to every run. */
  contexts?: string[];
  /**
   * Where each run's event goes when it ends. The API requires one for its generate operations, so
   * `generateText`/`streamText` need it; object calls without it run as streams.
   */
  callback?: GenerateObjectBody["callback"];
}

export interface GenserveProviderSettings extends ClientOptions, GenserveModelSettings {}

/** `createGenserve`'s result: call it with a workflow reference for a language model. */
export type GenserveProvider = (workflow: string, settings?: GenserveModelSettings) => LanguageModelV3;

const IGNORED = ["maxOutputTokens", "temperature", "stopSequences", "topP", "topK", "presencePenalty", "frequencyPenalty", "seed"] as const;

/** The prompt as one input text: a lone user message as it is, a conversation as a transcript. */
function inputOf(prompt: LanguageModelV3Prompt): { input: string; attachments: NonNullable<GenerateObjectBody["attachments"]> } {
  const attachments: NonNullable<GenerateObjectBody["attachments"]> = [];
  const turns: { role: string; text: string }[] = [];
  for (const message of prompt) {
    if (message.role === "system") {
      turns.push({ role: "system", text: message.content });
      continue;
    }
    const texts: string[] = [];
    for (const part of message.content) {
      if (part.type === "text") texts.push(part.text);
      else if (part.type === "file") {
        const data = part.data;
        const file = data instanceof URL ? data.href : typeof data === "string" ? data : btoa(Array.from(data, (b) => String.fromCharCode(b)).join(""));
        attachments.push({ file, mimeType: part.mediaType });
      }
    }
    if (texts.length > 0) turns.push({ role: message.role, text: texts.join("\n") });
  }
  const input = turns.length === 1 && turns[0]!.role === "user" ? turns[0]!.text : turns.map((t) => `${t.role[0]!.toUpperCase()}${t.role.slice(1)}: ${t.text}`).join("\n\n");
  return { input, attachments };
}

const usageOf = (metadata: RunMetadata): LanguageModelV3Usage => ({
  inputTokens: { total: metadata.inputTokens, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: metadata.outputTokens, text: metadata.outputTokens, reasoning: undefined },
});

const providerMetadataOf = (metadata: RunMetadata) => ({
  genserve: { runId: metadata.runId, cost: metadata.cost, model: metadata.model.name, modelTag: metadata.model.tag, durationInMs: metadata.durationInMs },
});

function warningsOf(options: LanguageModelV3CallOptions): SharedV3Warning[] {
  const warnings: SharedV3Warning[] = IGNORED.filter((name) => options[name] !== undefined).map((feature) => ({ type: "unsupported", feature, details: "The genserve workflow sets it." }));
  if (options.tools?.length) warnings.push({ type: "unsupported", feature: "tools", details: "genserve workflows do not call tools." });
  return warnings;
}

const headersOf = (options: LanguageModelV3CallOptions) => Object.fromEntries(Object.entries(options.headers ?? {}).filter((e): e is [string, string] => e[1] !== undefined));

class GenserveLanguageModel implements LanguageModelV3 {
  readonly specificationVersion = "v3";
  readonly provider = "genserve";
  readonly supportedUrls: Record<string, RegExp[]> = { "*/*": [/^https?:\/\//] };

  constructor(
    readonly modelId: string,
    private readonly client: GenserveClient,
    private readonly settings: GenserveModelSettings,
  ) {}

  private run(options: LanguageModelV3CallOptions) {
    const { input, attachments } = inputOf(options.prompt);
    const schema = options.responseFormat?.type === "json" ? ((options.responseFormat.schema as Record<string, unknown> | undefined) ?? undefined) : undefined;
    return {
      workflow: this.modelId,
      input,
      ...(attachments.length > 0 && { attachments }),
      ...(this.settings.contexts && { contexts: this.settings.contexts }),
      schema,
      signal: options.abortSignal,
      cancelOnAbort: true,
      headers: headersOf(options),
    };
  }

  private requireCallback(): NonNullable<GenserveModelSettings["callback"]> {
    if (this.settings.callback) return this.settings.callback;
    throw new GenserveValidationError(400, { code: "validation_failed", detail: "genserve's generate/text requires a callback: pass `callback` to createGenserve (or to the model).", errors: [{ path: "/callback", message: "is required" }] });
  }

  async doGenerate(options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
    const params = this.run(options);
    let text: string;
    let metadata: RunMetadata;
    if (options.responseFormat?.type === "json") {
      if (this.settings.callback) {
        ({ object: text, metadata } = await this.client.generateObject({ ...params, callback: this.settings.callback }).then((r) => ({ object: JSON.stringify(r.object), metadata: r.metadata })));
      } else {
        const result = await (await this.client.streamObject(params)).result();
        text = JSON.stringify(result.object);
        metadata = result.metadata;
      }
    } else {
      ({ text, metadata } = await this.client.generateText({ ...params, callback: this.requireCallback() }));
    }
    return {
      content: [{ type: "text", text }],
      finishReason: { unified: "stop", raw: undefined },
      usage: usageOf(metadata),
      providerMetadata: providerMetadataOf(metadata),
      response: { id: metadata.runId, modelId: metadata.model.name, timestamp: new Date() },
      warnings: warningsOf(options),
    };
  }

  async doStream(options: LanguageModelV3CallOptions): Promise<{ stream: ReadableStream<LanguageModelV3StreamPart> }> {
    const params = this.run(options);
    const warnings = warningsOf(options);
    if (options.responseFormat?.type !== "json") {
      // genserve has no text stream: the text arrives whole, as one delta.
      const callback = this.requireCallback();
      const done = this.client.generateText({ ...params, callback });
      return { stream: fromEvents(warnings, this.modelId, async function* () {
        const { text, metadata } = await done;
        yield { type: "item", id: 1, text } satisfies RunStreamEvent;
        yield { type: "done", id: 2, runId: metadata.runId, object: text, metadata } satisfies RunStreamEvent;
      }()) };
    }
    const { schema, workflow, input, attachments, contexts, headers, signal, cancelOnAbort } = params;
    const { events } = await this.client.streamEvents(
      { input, workflowSlug: workflow, ...(schema && { schema }), ...(attachments && { attachments }), ...(contexts && { contextSlugs: contexts }) },
      { headers, signal, cancelOnAbort },
    );
    return { stream: fromEvents(warnings, this.modelId, events) };
  }
}

/**
 * A run's events as AI SDK stream parts. A `restart` (genserve discarded an attempt that could
 * never validate) ends the current text part and begins another; readers that join all text (the
 * AI SDK's `streamObject`) see both attempts' text, so workflows streamed this way do best with
 * grammar or provider decoding, where restarts do not happen.
 */
function fromEvents(warnings: SharedV3Warning[], modelId: string, events: AsyncGenerator<RunStreamEvent>): ReadableStream<LanguageModelV3StreamPart> {
  let part = 0;
  let open = false;
  return new ReadableStream<LanguageModelV3StreamPart>({
    async start(controller) {
      controller.enqueue({ type: "stream-start", warnings });
      try {
        for await (const event of events) {
          if (event.type === "item") {
            if (!open) {
              controller.enqueue({ type: "text-start", id: String(part) });
              open = true;
            }
            controller.enqueue({ type: "text-delta", id: String(part), delta: event.text });
          } else if (event.type === "restart") {
            if (open) controller.enqueue({ type: "text-end", id: String(part++) });
            open = false;
          } else {
            if (open) controller.enqueue({ type: "text-end", id: String(part) });
            controller.enqueue({ type: "response-metadata", id: event.runId, modelId: event.metadata.model.name || modelId });
            controller.enqueue({ type: "finish", usage: usageOf(event.metadata), finishReason: { unified: "stop", raw: undefined }, providerMetadata: providerMetadataOf(event.metadata) });
          }
        }
      } catch (error) {
        controller.enqueue({ type: "error", error });
      }
      controller.close();
    },
    async cancel() {
      await events.return(undefined);
    },
  });
}

/**
 * Makes the provider.
 *
 * @example
 * ```ts
 * import { createGenserve } from "genserve/ai";
 * import { generateObject, streamText } from "ai";
 * import { z } from "zod";
 *
 * const genserve = createGenserve({ baseURL: "http://localhost:8080", apiKey: process.env.GENSERVE_KEY });
 * const { object, providerMetadata } = await generateObject({
 *   model: genserve("extract-invoice"),
 *   schema: z.object({ number: z.string(), total: z.number() }),
 *   prompt: "Invoice INV-7, 12 EUR",
 * });
 * providerMetadata?.genserve?.runId; // the genserve run, with its cost
 * ```
 */
export function createGenserve(settings: GenserveProviderSettings): GenserveProvider {
  const client = createClient(settings);
  return (workflow, model = {}) => new GenserveLanguageModel(workflow, client, { contexts: model.contexts ?? settings.contexts, callback: model.callback ?? settings.callback });
}
