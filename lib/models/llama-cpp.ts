/**
 * The local engine: a GGUF model run in-process by llama.cpp (node-llama-cpp), behind genserve's
 * ModelClient interface.
 *
 * - One loaded model per alias, shared by `parallel` lanes: each lane is a context with one
 *   sequence and its own threads, so concurrent runs decode side by side on separate cores. (One
 *   context with several sequences batches them into one decode instead; on CPU that measured
 *   0.93x the single-run throughput for two runs, two contexts 1.7x: see docs/benchmarks.md.)
 *   Further runs wait in a bounded queue; a full queue answers 429.
 * - Prompts use the model's own chat template (read from the GGUF by node-llama-cpp).
 * - Object runs sample under a GBNF grammar compiled from the request's JSON Schema (cached by
 *   schema hash); the result says whether the grammar was exact or validation still decides.
 * - Token counts come from the sequence's token meter; aborting the request stops decoding and
 *   frees the sequence.
 */
import "server-only";
import { availableParallelism } from "node:os";
import path from "node:path";
import { LRUCache } from "lru-cache";
import type { ChatHistoryItem, ChatWrapper, Llama, LlamaContext, LlamaGrammar, LlamaModel } from "node-llama-cpp";
import type { ModelConfig } from "../config/config-types";
import { LaneQueue } from "./lanes";
import { GenserveError } from "../errors";
import { type CompiledGrammar, UnsatisfiableSchemaError } from "../grammar/compile";
import type { GrammarCompiler } from "../grammar/grammar-pool";
import { schemaHash } from "../schema/canonical";
import { toModelError, windowExceeded } from "./provider-errors";
import { MODEL_FIX, type ModelFile } from "./model-source";
import type { DecodingMode } from "../domain/run-vocabulary";
import { messageText, type ModelClient, type ModelRequest, type ModelResult, type ModelStreamPart } from "./model-client";

export type LocalModelState =
  | { state: "loading" }
  | { state: "ready"; name: string; contextSize: number; parallel: number }
  | { state: "unavailable"; detail: string; fix: string };

export interface LocalModelClient extends ModelClient {
  readonly status: LocalModelState;
  /** Starts loading now (otherwise the first run does). */
  warm(): Promise<void>;
  /** Lanes in use and runs waiting for one, now. */
  lanes(): { parallel: number; busy: number; waiting: number };
  dispose(): Promise<void>;
}

export interface LlamaCppOptions {
  /** The model file, or why there is none (from `ensureModelFile`). */
  file: ModelFile;
  /** Compiles schemas to grammars off the event loop, within a time budget (shared by the local models). */
  grammars: GrammarCompiler;
  /** Log sink for engine messages. */
  log?: (level: "info" | "warn" | "error", message: string, fields?: Record<string, unknown>) => void;
  /** Told how long each run waited for a lane (metrics). */
  onLaneWait?: (alias: string, seconds: number) => void;
}

/** Tokens generated when neither the workflow nor the request sets a limit. */
const DEFAULT_MAX_TOKENS = 2048;
/** Per-sequence context when the configuration gives none (capped by what the model was trained on). */
const DEFAULT_CONTEXT = 4096;

type Binding = typeof import("node-llama-cpp");
let shared: Promise<{ binding: Binding; llama: Llama }> | undefined;

/** One llama.cpp binding per process, CPU only (prebuilt binaries; nothing is compiled at run time). */
function llamaInstance(): Promise<{ binding: Binding; llama: Llama }> {
  shared ??= import("node-llama-cpp").then(async (binding) => ({
    binding,
    llama: await binding.getLlama({ gpu: false, build: "never", logLevel: binding.LlamaLogLevel.error, progressLogs: false }),
  }));
  return shared;
}

interface Loaded {
  LlamaChat: Binding["LlamaChat"];
  /** The model's chat template, to count a prompt's tokens exactly as the chat will render it. */
  chatWrapper: ChatWrapper;
  llama: Llama;
  model: LlamaModel;
  /** One context per lane; a run holds a lane from start to end. */
  lanes: LlamaContext[];
  name: string;
}

export function createLlamaCppModel(config: ModelConfig, options: LlamaCppOptions): LocalModelClient {
  let status: LocalModelState = options.file.ok ? { state: "loading" } : { state: "unavailable", detail: options.file.detail, fix: options.file.fix };
  let loading: Promise<Loaded> | undefined;
  // Threads per lane: the cores shared out between the lanes. More threads than cores made llama.cpp
  // spin against Node's own thread and ran ~14x slower here (docs/benchmarks.md).
  const threads = config.threads ?? Math.max(1, Math.floor(availableParallelism() / config.parallel));
  // Compiled grammars by schema hash: a schema used again skips both compilers.
  const compiledGrammars = new LRUCache<string, Promise<CompiledGrammar>>({ max: 256 });
  const grammars = new LRUCache<string, Promise<LlamaGrammar | null>>({ max: 256 });

  // Lanes shared fairly between keys (lanes.ts).
  const laneQueue = new LaneQueue({ lanes: config.parallel, queue: config.queue, alias: config.alias });

  const load = (): Promise<Loaded> => {
    if (!options.file.ok) return Promise.reject(unavailable(status));
    const file = options.file.file;
    loading ??= (async () => {
      const { binding, llama } = await llamaInstance();
      const model = await llama.loadModel({ modelPath: file });
      const trained = model.trainContextSize;
      const contextSize = Math.min(config.contextWindow ?? DEFAULT_CONTEXT, trained);
      const lanes: LlamaContext[] = [];
      for (let i = 0; i < config.parallel; i++) lanes.push(await model.createContext({ contextSize, sequences: 1, threads }));
      const name = String(model.fileInfo.metadata.general?.name ?? "") || path.basename(file, ".gguf");
      status = { state: "ready", name, contextSize: lanes[0]!.contextSize, parallel: config.parallel };
      options.log?.("info", "local model loaded", { alias: config.alias, name, file, contextSize: lanes[0]!.contextSize, parallel: config.parallel, threadsPerLane: threads });
      return { LlamaChat: binding.LlamaChat, chatWrapper: binding.resolveChatWrapper(model), llama, model, lanes, name };
    })().catch((error: unknown) => {
      status = {
        state: "unavailable",
        detail: `The model file ${file} could not be loaded: ${(error as Error).message ?? String(error)}.`,
        fix: MODEL_FIX,
      };
      options.log?.("error", "local model failed to load", { alias: config.alias, file, error: (error as Error).message });
      throw unavailable(status);
    });
    return loading;
  };

  /**
   * The schema's grammar, compiled once per schema hash in the grammar workers (concurrent requests
   * for one schema share the compile, which is bounded by its budget, not by any one caller's
   * signal); a schema no value satisfies is a 400.
   */
  const compiledFor = (json: NonNullable<ModelRequest["json"]>): Promise<{ key: string; compiled: CompiledGrammar }> => {
    const key = json.hash ?? schemaHash(json.schema);
    let compiled = compiledGrammars.get(key);
    if (!compiled) {
      compiled = options.grammars.compile(json.schema).catch((error: unknown) => {
        compiledGrammars.delete(key);
        if (error instanceof UnsatisfiableSchemaError) {
          throw new GenserveError("validation_failed", { detail: "The schema admits no value, so nothing can be generated.", errors: [{ path: "/schema", message: "admits no value" }] });
        }
        throw error;
      });
      compiledGrammars.set(key, compiled);
    }
    return compiled.then((c) => ({ key, compiled: c }));
  };

  /** The grammar llama.cpp samples under, created once per schema hash from the compiled GBNF. */
  const grammarFor = (loaded: Loaded, key: string, compiled: CompiledGrammar) => {
    let grammar = grammars.get(key);
    if (!grammar) {
      // Should llama.cpp refuse a grammar (a compiler bug), the run still works: unconstrained, validated.
      grammar = loaded.llama.createGrammar({ grammar: compiled.gbnf }).catch((error: unknown) => {
        options.log?.("error", "llama.cpp refused a compiled grammar; generating without it", { alias: config.alias, schemaHash: key, error: (error as Error).message });
        return null;
      });
      grammars.set(key, grammar);
    }
    return grammar;
  };

  /** The prompt in tokens, rendered through the model's chat template as LlamaChat will evaluate it. */
  const promptTokens = (loaded: Loaded, request: Omit<ModelRequest, "abortSignal">): number => {
    const { contextText } = loaded.chatWrapper.generateContextState({ chatHistory: [...history(request), { type: "model", response: [] }] });
    return contextText.tokenize(loaded.model.tokenizer).length;
  };

  /** The output budget the window leaves after the prompt; a prompt that leaves none is refused (413). */
  const outputBudget = (loaded: Loaded, request: Omit<ModelRequest, "abortSignal">): { promptTokens: number; maxTokens: number } => {
    const contextSize = loaded.lanes[0]!.contextSize;
    const used = promptTokens(loaded, request);
    const room = contextSize - used;
    if (room <= 0) throw windowExceeded(config.alias, used, contextSize);
    return { promptTokens: used, maxTokens: Math.min(request.maxOutputTokens ?? DEFAULT_MAX_TOKENS, room) };
  };

  /** Runs one generation; `onText` receives text as it is decoded. */
  const run = async (request: ModelRequest, onText?: (text: string) => void): Promise<ModelResult> => {
    const loaded = await load();
    // Counted again here: a retry's prompt carries the previous output and its errors.
    const { maxTokens } = outputBudget(loaded, request);
    // The grammar is ready before the run takes a lane: a slow compile never holds one.
    const entry = request.json ? await compiledFor(request.json) : undefined;
    const waitStarted = performance.now();
    const { lane, release } = await laneQueue.acquire(request.owner ?? "", request.abortSignal);
    options.onLaneWait?.(config.alias, (performance.now() - waitStarted) / 1000);
    const sequence = loaded.lanes[lane]!.getSequence();
    // The same template instance that counted the prompt's tokens.
    const chat = new loaded.LlamaChat({ contextSequence: sequence, chatWrapper: loaded.chatWrapper, autoDisposeSequence: false });
    try {
      let decoding: DecodingMode = "none";
      let grammar: LlamaGrammar | undefined;
      if (entry) {
        grammar = (await grammarFor(loaded, entry.key, entry.compiled)) ?? undefined;
        decoding = !grammar ? "prompt" : entry.compiled.exact ? "grammar" : "grammar+validate";
      }
      const response = await chat.generateResponse(history(request), {
        grammar,
        maxTokens,
        temperature: request.temperature,
        signal: request.abortSignal,
        stopOnAbortSignal: false,
        onTextChunk: onText,
      });
      return {
        text: response.response,
        usage: { inputTokens: sequence.tokenMeter.usedInputTokens, outputTokens: sequence.tokenMeter.usedOutputTokens },
        modelId: loaded.name,
        finishReason: finishReason(response.metadata.stopReason),
        decoding,
        ...(entry?.compiled.fallback && {
          warnings: [`The schema's grammar was not built (${entry.compiled.fallback}): the output was sampled as any JSON value and held to the schema by validation.`],
        }),
      };
    } catch (error) {
      throw toModelError(request.abortSignal.aborted ? (request.abortSignal.reason ?? error) : error, request.abortSignal);
    } finally {
      chat.dispose();
      sequence.dispose();
      release();
    }
  };

  return {
    alias: config.alias,
    get modelId() {
      return status.state === "ready" ? status.name : config.model;
    },
    // The model reads the schema from the prompt; the grammar then enforces it token by token.
    capabilities: { nativeStructuredOutput: false, objectRootOnly: false },
    get status() {
      return status;
    },
    async warm() {
      await load().catch(() => undefined);
    },
    async preflight(request) {
      // A model that cannot run refuses the run while it is planned, so none is stored (and billed)
      // only to fail a few milliseconds later.
      if (status.state === "unavailable") throw unavailable(status);
      // The grammar compiler finds a schema no value satisfies, whether or not the model is loaded.
      if (request.json) await compiledFor(request.json);
      if (status.state !== "ready") return undefined;
      const loaded = await load();
      const contextWindow = loaded.lanes[0]!.contextSize;
      const used = promptTokens(loaded, request);
      return { promptTokens: used, contextWindow, maxOutputTokens: Math.min(request.maxOutputTokens ?? DEFAULT_MAX_TOKENS, contextWindow - used) };
    },
    async schemaSupport(json) {
      // The same compile (and cache entry) a run on this schema would use.
      const { compiled } = await compiledFor(json);
      return { mode: "grammar", exact: compiled.exact, notes: compiled.unexpressed };
    },
    generate: (request) => run(request),
    async *stream(request): AsyncIterable<ModelStreamPart> {
      // Text arrives through a callback; hand it to the iterator through a small queue.
      const chunks: string[] = [];
      let wake: (() => void) | undefined;
      let done = false;
      const finished = run(request, (text) => {
        chunks.push(text);
        wake?.();
      }).finally(() => {
        done = true;
        wake?.();
      });
      finished.catch(() => undefined); // surfaced below
      while (!done || chunks.length) {
        if (chunks.length) {
          yield { type: "text", text: chunks.splice(0).join("") };
          continue;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
      const { text: _text, ...rest } = await finished;
      yield { type: "finish", ...rest };
    },
    lanes: () => ({ parallel: config.parallel, busy: laneQueue.busyLanes, waiting: laneQueue.waitingRuns }),
    async dispose() {
      if (!loading) return;
      const loaded = await loading.catch(() => undefined);
      for (const lane of loaded?.lanes ?? []) await lane.dispose();
      await loaded?.model.dispose();
    },
  };
}

function unavailable(status: LocalModelState): GenserveError {
  const detail = status.state === "unavailable" ? `${status.detail} ${status.fix}` : "The model is not loaded.";
  return new GenserveError("model_unavailable", { detail, headers: { "Retry-After": "30" } });
}

/** System instructions first, then the conversation; the chat template does the rest. */
function history(request: Omit<ModelRequest, "abortSignal">): ChatHistoryItem[] {
  const items: ChatHistoryItem[] = [];
  if (request.system) items.push({ type: "system", text: request.system });
  for (const message of request.messages) {
    const text = messageText(message.content);
    items.push(message.role === "user" ? { type: "user", text } : { type: "model", response: [text] });
  }
  return items;
}

function finishReason(stopReason: string | undefined): string {
  if (stopReason === "maxTokens") return "length";
  if (stopReason === "abort") return "aborted";
  return "stop";
}
