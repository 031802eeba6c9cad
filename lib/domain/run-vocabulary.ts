/**
 * What a run is, independent of storage, transport and the models that execute it: the vocabulary
 * the store, the pipeline, delivery and the API shapes share. Browser-safe; it imports nothing but the domain's own types.
 */
import type { GroundingSummary } from "./grounding";

export type RunOperation = "generate.object" | "generate.text" | "stream.object";
export const RUN_OPERATIONS = ["generate.object", "generate.text", "stream.object"] as const satisfies readonly RunOperation[];

/** "cancelled": stopped by POST /runs/{id}/cancel or `cancelOnDisconnect`; its `error` is the problem `cancelled`. */
export type RunStatus = "queued" | "running" | "succeeded" | "failed" | "cancelled";
export const RUN_STATUSES = ["queued", "running", "succeeded", "failed", "cancelled"] as const satisfies readonly RunStatus[];
/** The statuses of a run that has ended. */
export type EndedRunStatus = Exclude<RunStatus, "queued" | "running">;

/**
 * How an object output was held to its schema: "grammar" (the local engine sampled under a grammar
 * that expresses the whole schema), "grammar+validate" (a grammar for part of it; validation and
 * retry do the rest), "provider" (the provider's native structured output), "prompt" (the schema in
 * the prompt only). "none" for text runs.
 */
export type DecodingMode = "grammar" | "grammar+validate" | "provider" | "prompt" | "none";
export const DECODING_MODES = ["grammar", "grammar+validate", "provider", "prompt", "none"] as const satisfies readonly DecodingMode[];

/** What every response, event and stored run says about a run. */
export interface RunMetadata {
  runId: string;
  /** US dollars as a decimal string, e.g. "0.0000555". */
  cost: string;
  model: { name: string; tag: string };
  durationInMs: number;
  inputTokens: number;
  outputTokens: number;
  /** What the run tolerated or fell back from (present only when there was something). */
  warnings?: string[];
  /** For object runs asked for `grounding`: leaves found in the sources, of all leaves. */
  grounding?: GroundingSummary;
  /** Why the model stopped, when not the ordinary `stop`: `length` (its output limit), `content-filter`… */
  finishReason?: string;
}

/** Where a generate run's event is delivered. */
export interface CallbackSpec {
  url: string;
  customProperties?: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** An attachment as a caller sends it: inline content (base64 or a data: URL) or an http(s) URL. */
export interface AttachmentInput {
  file: string;
  mimeType?: string;
}

/** What a run records of an attachment (never its bytes). */
export interface AttachmentMeta {
  index: number;
  source: "inline" | "url";
  url?: string;
  mimeType: string;
  bytes: number;
  sha256: string;
  /** Characters of text that reached the prompt (0 when none did). */
  textChars: number;
}
