/**
 * The state behind `useObjectStream`, kept outside React so any view layer can hold it: one
 * streamed run at a time, its partial object (discarded on `restart`), loading, error, and the final
 * object and metadata; a new `submit` or `stop()` aborts the previous stream. Subscribers hear of
 * each change; snapshots are immutable. Browser-safe.
 */
import type { GenserveClient, StreamObjectParams } from "./client";
import type { RunMetadata } from "./operations";
import type { DeepPartial, InferObject, SchemaInput } from "./schema-input";

export interface ObjectStreamSnapshot<T> {
  /** The object so far (undefined before the first piece, and after a restart). */
  object: DeepPartial<T> | undefined;
  isLoading: boolean;
  error: Error | undefined;
  runId: string | undefined;
  /** The run's metadata once it succeeded. */
  metadata: RunMetadata | undefined;
}

/** What `submit` sends: the input text, or the input with per-call extras. */
export type SubmitInput = string | { input: string; threadId?: string; contexts?: string[]; attachments?: StreamObjectParams<undefined>["attachments"] };

export interface ObjectStreamStateOptions<S extends SchemaInput | undefined> {
  workflow?: string;
  schema?: S;
  contexts?: string[];
  threadId?: string;
  /** Cancel the run on the server on `stop()` (default true). */
  cancelOnStop?: boolean;
  onFinish?: (result: { object: InferObject<S>; metadata: RunMetadata; runId: string }) => void;
  onError?: (error: Error) => void;
}

const IDLE = { object: undefined, isLoading: false, error: undefined, runId: undefined, metadata: undefined };

export class ObjectStreamState<S extends SchemaInput | undefined> {
  private snapshot: ObjectStreamSnapshot<InferObject<S>> = IDLE;
  private readonly listeners = new Set<() => void>();
  private controller: AbortController | null = null;

  constructor(
    readonly client: GenserveClient,
    public options: ObjectStreamStateOptions<S>,
  ) {}

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getSnapshot = (): ObjectStreamSnapshot<InferObject<S>> => this.snapshot;

  private set(change: Partial<ObjectStreamSnapshot<InferObject<S>>>): void {
    this.snapshot = { ...this.snapshot, ...change };
    for (const listener of this.listeners) listener();
  }

  /** Starts a run (stopping one in progress); resolves when it ends, whatever the outcome. */
  submit = async (what: SubmitInput): Promise<void> => {
    this.stop();
    const controller = new AbortController();
    this.controller = controller;
    const extra = typeof what === "string" ? { input: what } : what;
    this.set({ ...IDLE, isLoading: true });
    const { workflow, schema, contexts, threadId, cancelOnStop = true } = this.options;
    try {
      const stream = await this.client.streamObject({
        workflow,
        schema,
        input: extra.input,
        threadId: extra.threadId ?? threadId,
        contexts: extra.contexts ?? contexts,
        attachments: extra.attachments,
        signal: controller.signal,
        cancelOnAbort: cancelOnStop,
      });
      if (controller.signal.aborted) return;
      this.set({ runId: stream.runId });
      for await (const part of stream) {
        if (controller.signal.aborted) return;
        if (part.type === "partial") this.set({ object: part.object });
        else if (part.type === "restart") this.set({ object: undefined });
        else {
          this.set({ object: part.object as DeepPartial<InferObject<S>>, metadata: part.metadata, isLoading: false });
          this.options.onFinish?.({ object: part.object as InferObject<S>, metadata: part.metadata, runId: part.runId });
        }
      }
    } catch (error) {
      if (controller.signal.aborted) return;
      const failure = error instanceof Error ? error : new Error(String(error));
      this.set({ error: failure, isLoading: false });
      this.options.onError?.(failure);
    } finally {
      if (this.controller === controller) this.controller = null;
    }
  };

  /** Stops the stream in progress (and, unless `cancelOnStop: false`, its run on the server). */
  stop = (): void => {
    const controller = this.controller;
    if (!controller) return;
    this.controller = null;
    controller.abort(new DOMException("Stopped", "AbortError"));
    this.set({ isLoading: false });
  };
}
