/** Runs, their threads and streams: the records of `Store["runs"]`, `threads`, `streams` and `idempotency`. */

import "server-only";
import type { RunDraft } from "../domain/drafts";
import type { GroundedLeaf } from "../domain/grounding";
import type { AttachmentMeta, CallbackSpec, DecodingMode, RunOperation, RunStatus } from "../domain/run-vocabulary";
import type { ProblemBody } from "../errors";

export interface RunRecord {
  id: string;
  operation: RunOperation;
  workflowSlug: string;
  keyId: string;
  status: RunStatus;
  input: string;
  schema: unknown | null;
  contextSlugs: string[];
  /** For contexts too large for the model's window: the ids of the chunks the run used. */
  contextChunks: string[];
  /** What the run used, to reproduce and compare it: "config" or the API version number. */
  workflowVersion: string | null;
  /** The label the caller named (`slug@staging`), or `production` when a plain slug resolved through it; null otherwise. */
  workflowLabel: string | null;
  contextVersions: Record<string, string>;
  promptHash: string | null;
  schemaHash: string | null;
  attachments: AttachmentMeta[];
  callback: CallbackSpec | null;
  output: unknown | null;
  error: ProblemBody | null;
  modelName: string | null;
  modelTag: string | null;
  /** How the output was held to the schema; null before the run finishes. */
  decoding: DecodingMode | null;
  /** What the run tolerated or fell back from, for the caller to know (empty when nothing). */
  warnings: string[];
  /** The prompt in the model's own tokens, when the engine could count them before the run (local models). */
  promptTokens: number | null;
  /** The most tokens the output was allowed: the workflow's limit, cut to what the context window left. */
  outputTokenLimit: number | null;
  inputTokens: number;
  outputTokens: number;
  cost: string;
  durationMs: number | null;
  attempts: number;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
  /** The run's span as a W3C traceparent (its trace id: the caller's trace, or a new one); null without tracing or an incoming trace. */
  traceparent: string | null;
  /** The test-suite evaluation the run was made for (a case or a judge run); null for others. */
  evaluationId: string | null;
  /** For streamed output: how it arrived, as [milliseconds since the run began, characters so far] pairs (null: not recorded). */
  pace: [number, number][] | null;
  /** A draft run's record: the version it started from, the definition that ran and what differs; null for other runs. */
  draft: RunDraft | null;
  /** For an object run asked for `grounding`: where each value of its output was found; null otherwise. */
  grounding: GroundedLeaf[] | null;
  /** The earlier messages the request itself gave (not a thread's), oldest first; null when none. */
  history: RunHistory | null;
}

/** Earlier messages of a run's own request, as the model was sent them. */
export type RunHistory = { role: "user" | "assistant"; content: string }[];

export type NewRun = Pick<RunRecord, "id" | "operation" | "workflowSlug" | "keyId" | "input" | "schema" | "contextSlugs" | "attachments" | "callback" | "modelTag" | "createdAt"> & {
  contextChunks?: string[];
  workflowVersion?: string;
  workflowLabel?: string | null;
  draft?: RunDraft | null;
  history?: RunHistory | null;
  contextVersions?: Record<string, string>;
  promptHash?: string;
  schemaHash?: string;
  promptTokens?: number;
  outputTokenLimit?: number;
  /** "queued" for an asynchronous run, whose request is kept until it finishes. */
  status?: "queued" | "running";
  request?: unknown;
  /** For a running run: the process executing it, and until when (renewed while it runs). */
  lease?: Lease;
  traceparent?: string | null;
  evaluationId?: string | null;
};

export interface IdempotencyRecord {
  requestHash: string;
  state: "in_progress" | "done";
  runId: string | null;
  responseStatus: number | null;
  responseBody: string | null;
  createdAt: string;
}

export type RunOutcome = Pick<RunRecord, "status" | "output" | "error" | "modelName" | "modelTag" | "decoding" | "warnings" | "inputTokens" | "outputTokens" | "cost" | "durationMs" | "attempts" | "finishedAt"> & { pace?: [number, number][] | null; grounding?: GroundedLeaf[] | null };

export interface RunFilter {
  /** Only runs of this key; undefined lists every key's runs (admin). */
  keyId?: string;
  /** Only runs of this project's keys. */
  projectId?: string;
  workflowSlug?: string;
  status?: RunStatus;
  operation?: RunOperation;
  /** Only the runs of this evaluation. */
  evaluationId?: string;
  /** Runs with an id lower than this one (ids sort by creation time). */
  beforeId?: string;
  /** Runs with an id at or above this one: created at or after a time (`runIdAt`). */
  fromId?: string;
  /** Runs whose input contains this text, ignoring case (ASCII), or whose id it is (within `RunListBounds`). */
  search?: string;
  limit: number;
}

export interface ThreadRecord {
  id: string;
  keyId: string;
  workflowSlug: string;
  createdAt: string;
  updatedAt: string;
}

export interface ThreadMessage {
  role: "user" | "assistant";
  content: string;
  runId: string | null;
  createdAt: string;
}

/** Work held by one process until a time: a run it executes, an event it delivers. */
export interface Lease {
  /** The process (replica) holding it. */
  owner: string;
  until: string;
}

/** A stored run that was left `running` and is now claimed for reconciliation. */
export type StrandedRun = RunRecord & { request: unknown | null; asyncStarts: number };

/** One event of a streamed run as stored for other processes: `event` is its JSON. */
export interface StoredStreamEvent {
  seq: number;
  event: string;
  final: boolean;
}
