/**
 * genserve's TypeScript client (`genserve/client`): the three operations with typed results, object
 * streams of typed partial objects that resume by themselves after a dropped connection, async runs,
 * cancellation, idempotency keys and typed errors. Only `fetch`: Node, browsers, edge runtimes, Bun.
 * Browser-safe.
 *
 * @example
 * ```ts
 * import { createClient } from "genserve/client";
 * import { z } from "zod";
 *
 * const genserve = createClient({ baseURL: "https://genserve.example.com", apiKey: process.env.GENSERVE_KEY });
 * const Invoice = z.object({ number: z.string(), total: z.number() });
 * const { object, metadata } = await genserve.generateObject({
 *   workflow: "extract-invoice",
 *   input: "Invoice INV-7, 12 EUR",
 *   schema: Invoice,
 *   callback: { url: "https://example.com/hooks/genserve" },
 * });
 * object.total; // number
 * ```
 */
import { errorFromProblem, GenserveApiError } from "./api-error";
import { ObjectStream } from "./object-stream";
import { OPERATIONS, pathOf, type GenerateObjectAnswer, type GenerateObjectBody, type GenerateTextAnswer, type QueuedRun, type Run, type RunCancellation, type RunMetadata, type StreamObjectBody } from "./operations";
import { followRun, STREAM_ACCEPT, type RunStreamEvent } from "./run-stream";
import { parseWithSchema, toJsonSchema, type InferObject, type SchemaInput } from "./schema-input";
import { pause, Transport, type ClientOptions } from "./transport";

export type { ClientOptions };

/** What every run request may carry. */
export interface RunOptions {
  /** Stops waiting; with `cancelOnAbort` the run is cancelled on the server too. */
  signal?: AbortSignal;
  /** Cancel the run on the server when `signal` aborts (default false: the run completes and is stored). */
  cancelOnAbort?: boolean;
  /** Extra headers for this request (e.g. `traceparent`). */
  headers?: Record<string, string>;
}

interface RunInput {
  /** The workflow: `slug`, `slug@4` (a version) or `slug@label`. */
  workflow: string;
  input: string;
  attachments?: GenerateObjectBody["attachments"];
  /** Context slugs added to the run. */
  contexts?: string[];
  /** Unsaved edits of the workflow to run with (as the playground's drafts). */
  draft?: GenerateObjectBody["draft"];
}

export interface GenerateObjectParams<S extends SchemaInput | undefined> extends RunInput, RunOptions {
  /** A JSON Schema, a zod schema or a Standard Schema with JSON Schema output; absent: the workflow's default schema. */
  schema?: S;
  /** Where the run's event is delivered when it ends (required by the API). */
  callback: GenerateObjectBody["callback"];
  /** A repeat with the same key within 24 h answers the first response instead of running again. */
  idempotencyKey?: string;
}

export interface GenerateTextParams extends RunInput, RunOptions {
  callback: GenerateObjectBody["callback"];
  idempotencyKey?: string;
}

export interface StreamObjectParams<S extends SchemaInput | undefined> extends Omit<RunInput, "workflow">, RunOptions {
  /** The workflow; may be left out when `threadId` names an existing thread. */
  workflow?: string;
  /** A conversation thread: earlier turns become the run's history. */
  threadId?: string;
  schema?: S;
  /** Reconnections in a row that may fail before the stream gives up (default 8). */
  maxReconnects?: number;
  /** Told when the client reconnects after a drop, with the last event id it had. */
  onReconnect?: (lastEventId: number) => void;
}

export interface ObjectResult<T> {
  object: T;
  metadata: RunMetadata;
  runId: string;
}

export interface TextResult {
  text: string;
  metadata: RunMetadata;
  runId: string;
}

/** The client `createClient` returns. */
export interface GenserveClient {
  /** POST /api/v1/generate/object: one JSON value validated against `schema`, typed from it. */
  generateObject<S extends SchemaInput | undefined = undefined>(params: GenerateObjectParams<S>): Promise<ObjectResult<InferObject<S>>>;
  /** POST /api/v1/generate/text. */
  generateText(params: GenerateTextParams): Promise<TextResult>;
  /** POST /api/v1/stream/object: typed partial objects as they arrive; resumes after a dropped connection. */
  streamObject<S extends SchemaInput | undefined = undefined>(params: StreamObjectParams<S>): Promise<ObjectStream<InferObject<S>>>;
  /** Queues an object run (`Prefer: respond-async`); its result goes to the callback and `waitForRun`. */
  submitObject<S extends SchemaInput | undefined = undefined>(params: GenerateObjectParams<S>): Promise<QueuedRun>;
  /** Queues a text run (`Prefer: respond-async`). */
  submitText(params: GenerateTextParams): Promise<QueuedRun>;
  /** Polls a run until it ends: the run when it succeeded, else its error (typed, with `runId`). */
  waitForRun(runId: string, options?: { signal?: AbortSignal; pollIntervalMs?: number }): Promise<Run>;
  /** GET /api/v1/runs/{id}. */
  getRun(runId: string, options?: { signal?: AbortSignal }): Promise<Run>;
  /** POST /api/v1/runs/{id}/cancel: stops a queued or running run. */
  cancelRun(runId: string): Promise<RunCancellation>;
  /** A stream's raw events (the text pieces, restarts, the end), resumed across drops: for callers that parse themselves. */
  streamEvents(body: StreamObjectBody, options?: RunOptions & { maxReconnects?: number; onReconnect?: (lastEventId: number) => void; cancelOnDisconnect?: boolean }): Promise<{ runId: string; events: AsyncGenerator<RunStreamEvent> }>;
}

const withCancel = (path: string, cancel: boolean | undefined) => (cancel ? `${path}?cancelOnDisconnect=true` : path);

/**
 * Makes a client for one genserve (or your app's proxy to it).
 *
 * @example
 * ```ts
 * const genserve = createClient({ baseURL: "http://localhost:8080", apiKey: "gs_..." });
 * const stream = await genserve.streamObject({ workflow: "extract-invoice", input, schema });
 * for await (const partial of stream.partialObjects()) console.log(partial);
 * ```
 */
export function createClient(options: ClientOptions): GenserveClient {
  const transport = new Transport(options);

  const objectBody = (params: GenerateObjectParams<SchemaInput | undefined>): GenerateObjectBody => {
    const schema = toJsonSchema(params.schema);
    return {
      input: params.input,
      type: "event",
      callback: params.callback,
      workflowSlug: params.workflow,
      ...(schema !== undefined && { schema }),
      ...(params.attachments && { attachments: params.attachments }),
      ...(params.contexts && { contextSlugs: params.contexts }),
      ...(params.draft && { draft: params.draft }),
    };
  };
  const textBody = (params: GenerateTextParams) => {
    const { schema: _none, ...body } = objectBody({ ...params, schema: undefined });
    return body;
  };
  const runHeaders = (params: { idempotencyKey?: string; headers?: Record<string, string> }, async = false) => ({
    ...params.headers,
    ...(params.idempotencyKey !== undefined && { "Idempotency-Key": params.idempotencyKey }),
    ...(async && { Prefer: "respond-async" }),
  });

  const client: GenserveClient = {
    async generateObject(params) {
      const { body } = await transport.json<GenerateObjectAnswer>("POST", withCancel(OPERATIONS.generateObject.path, params.cancelOnAbort), {
        body: objectBody(params),
        headers: runHeaders(params),
        signal: params.signal,
        safeToResend: params.idempotencyKey !== undefined,
      });
      const parsed = await parseWithSchema<never>(params.schema, body.object);
      if ("issues" in parsed) throw errorFromProblem(422, { code: "schema_mismatch", detail: "The run's object does not satisfy the schema given to the client.", errors: parsed.issues, runId: body.metadata.runId });
      return { object: parsed.value, metadata: body.metadata, runId: body.metadata.runId };
    },

    async generateText(params) {
      const { body } = await transport.json<GenerateTextAnswer>("POST", withCancel(OPERATIONS.generateText.path, params.cancelOnAbort), {
        body: textBody(params),
        headers: runHeaders(params),
        signal: params.signal,
        safeToResend: params.idempotencyKey !== undefined,
      });
      return { text: body.text, metadata: body.metadata, runId: body.metadata.runId };
    },

    async submitObject(params) {
      return (await transport.json<QueuedRun>("POST", OPERATIONS.generateObject.path, { body: objectBody(params), headers: runHeaders(params, true), signal: params.signal, safeToResend: params.idempotencyKey !== undefined })).body;
    },

    async submitText(params) {
      return (await transport.json<QueuedRun>("POST", OPERATIONS.generateText.path, { body: textBody(params), headers: runHeaders(params, true), signal: params.signal, safeToResend: params.idempotencyKey !== undefined })).body;
    },

    async getRun(runId, opts = {}) {
      return (await transport.json<Run>("GET", pathOf("getRun", runId), { signal: opts.signal, safeToResend: true })).body;
    },

    async cancelRun(runId) {
      return (await transport.json<RunCancellation>("POST", pathOf("cancelRun", runId), { safeToResend: true })).body;
    },

    async waitForRun(runId, opts = {}) {
      for (;;) {
        const run = await client.getRun(runId, opts);
        if (run.status === "succeeded") return run;
        if (run.status === "failed" || run.status === "cancelled") {
          const problem = run.error ?? { code: run.status === "cancelled" ? "cancelled" : "internal", detail: `The run ${run.status}.`, status: run.status === "cancelled" ? 499 : 500 };
          throw errorFromProblem(problem.status, { ...problem, runId });
        }
        await pause(opts.pollIntervalMs ?? 500, opts.signal);
      }
    },

    async streamEvents(body, opts = {}) {
      const open = () =>
        transport.send("POST", withCancel(OPERATIONS.streamObject.path, opts.cancelOnDisconnect), { body, headers: { ...STREAM_ACCEPT, ...opts.headers }, signal: opts.signal });
      const stream = await followRun(transport, open, { signal: opts.signal, maxReconnects: opts.maxReconnects, onReconnect: opts.onReconnect });
      if (opts.cancelOnAbort && opts.signal && stream.runId) {
        const cancel = () => void client.cancelRun(stream.runId).catch(() => undefined);
        if (opts.signal.aborted) cancel();
        else opts.signal.addEventListener("abort", cancel, { once: true });
      }
      return stream;
    },

    async streamObject(params) {
      const schema = toJsonSchema(params.schema);
      const body: StreamObjectBody = {
        input: params.input,
        ...(params.workflow !== undefined && { workflowSlug: params.workflow }),
        ...(params.threadId !== undefined && { threadId: params.threadId }),
        ...(schema !== undefined && { schema }),
        ...(params.attachments && { attachments: params.attachments }),
        ...(params.contexts && { contextSlugs: params.contexts }),
        ...(params.draft && { draft: params.draft }),
      };
      const { runId, events } = await client.streamEvents(body, params);
      return new ObjectStream(runId, events, params.schema);
    },
  };
  return client;
}

export { ObjectStream, type ObjectStreamPart, type ObjectStreamResult } from "./object-stream";
export { jsonSchema, type DeepPartial, type InferObject, type JsonSchema, type SchemaInput, type StandardSchemaLike, type TypedJsonSchema } from "./schema-input";
export {
  GenserveApiError,
  GenserveAuthError,
  GenserveCancelledError,
  GenserveConnectionError,
  GenserveLimitError,
  GenserveNotFoundError,
  GenserveRunError,
  GenserveSignatureError,
  GenserveValidationError,
  type FieldProblem,
  type ProblemDetails,
} from "./api-error";
export { verifyCallback, type CallbackEvent } from "./verify-callback";
export type { QueuedRun, Run, RunCancellation, RunMetadata, StreamObjectBody } from "./operations";
export type { RunStreamEvent } from "./run-stream";
export const isGenserveApiError = (value: unknown): value is GenserveApiError => value instanceof GenserveApiError;
