import { toModelError } from "../../lib/models/provider-errors";
import type { ModelCapabilities, ModelClient, ModelRequest, ModelResult, ModelStreamPart, SchemaSupport, TokenUsage } from "../../lib/models/model-client";

/** One scripted answer: text (streamed in `chunks` when given), or an error to throw. */
export interface Turn {
  text?: string;
  chunks?: string[];
  error?: unknown;
  usage?: TokenUsage;
  /** Waits this long before answering (or between chunks); an abort ends the wait. */
  delayMs?: number;
  modelId?: string;
  /** Never answers and ignores the abort signal: a provider call stuck below anything that listens. */
  hang?: boolean;
  /** Waits `delayMs` whatever the abort signal says, then answers: a call that does not heed its abort. */
  deaf?: boolean;
}

/**
 * A ModelClient for in-process tests: answers from a script and records every request it was sent
 * (the way the AI SDK's mock models record their calls). Aborts are honoured like a real adapter's:
 * the signal's reason surfaces as the adapter's error (a deadline becomes model_timeout).
 */
export class RecordingModel implements ModelClient {
  readonly alias: string;
  readonly modelId: string;
  readonly capabilities: ModelCapabilities;
  readonly calls: ModelRequest[] = [];
  /** Whether each call's signal was aborted by the time the call ended (streams stopped early). */
  readonly aborted: boolean[] = [];
  private readonly script: Turn[] = [];

  constructor(options: { alias?: string; modelId?: string; capabilities?: Partial<ModelCapabilities> } = {}) {
    this.alias = options.alias ?? "mock";
    this.modelId = options.modelId ?? "mock-1";
    this.capabilities = { nativeStructuredOutput: true, objectRootOnly: false, ...options.capabilities };
  }

  reply(...turns: Turn[]): this {
    this.script.push(...turns);
    return this;
  }

  async schemaSupport(): Promise<SchemaSupport> {
    return { mode: this.capabilities.nativeStructuredOutput ? "provider" : "prompt", exact: false, notes: [] };
  }

  async generate(request: ModelRequest): Promise<ModelResult> {
    const turn = this.take(request);
    if (turn.hang) return new Promise<never>(() => undefined);
    if (turn.deaf) {
      await new Promise((resolve) => setTimeout(resolve, turn.delayMs ?? 0));
      this.aborted.push(request.abortSignal.aborted);
      return { text: turn.text ?? "", usage: turn.usage ?? { inputTokens: 10, outputTokens: 5 }, modelId: turn.modelId, finishReason: "stop" };
    }
    try {
      await wait(turn.delayMs, request.abortSignal);
      if (turn.error !== undefined) throw turn.error;
      return { text: turn.text ?? "", usage: turn.usage ?? { inputTokens: 10, outputTokens: 5 }, modelId: turn.modelId, finishReason: "stop" };
    } catch (error) {
      throw toModelError(error, request.abortSignal);
    } finally {
      this.aborted.push(request.abortSignal.aborted);
    }
  }

  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    const turn = this.take(request);
    if (turn.hang) await new Promise<never>(() => undefined);
    try {
      if (turn.error !== undefined) {
        await wait(turn.delayMs, request.abortSignal);
        throw turn.error;
      }
      for (const chunk of turn.chunks ?? [turn.text ?? ""]) {
        await wait(turn.delayMs, request.abortSignal);
        if (request.abortSignal.aborted) throw request.abortSignal.reason;
        yield { type: "text", text: chunk };
      }
      yield { type: "finish", usage: turn.usage ?? { inputTokens: 10, outputTokens: 5 }, modelId: turn.modelId, finishReason: "stop" };
    } catch (error) {
      throw toModelError(error, request.abortSignal);
    } finally {
      this.aborted.push(request.abortSignal.aborted);
    }
  }

  private take(request: ModelRequest): Turn {
    this.calls.push(request);
    const turn = this.script.shift();
    if (!turn) throw new Error(`RecordingModel: no scripted answer for call ${this.calls.length}`);
    return turn;
  }
}

function wait(ms: number | undefined, signal: AbortSignal): Promise<void> {
  // A signal aborted before the call began fails it at once, as a real provider call does.
  if (signal.aborted) return Promise.reject(signal.reason);
  if (!ms) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });
}
