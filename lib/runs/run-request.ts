import "server-only";
import type { Logger } from "pino";
import type { WorkflowDraft } from "../domain/drafts";
import type { CatalogWorkflow } from "../catalog/workflow-catalog";
import type { AttachmentInput, CallbackSpec, DecodingMode, RunOperation } from "../domain/run-vocabulary";
import type { Principal } from "../keys/api-keys";
import type { ModelClient, ModelRequest, TokenUsage } from "../models/model-client";
import type { PreparedSchema } from "../schema/validator";
import type { TraceSpan } from "../observability/tracing";
import type { MeterState, NewRun } from "../store/store-types";
import type { PaceRecorder } from "./pace";
import type { Prompt } from "./prompt";
import type { RunGrounding } from "./grounding-check";

/** What a caller asks of a run, as the route hands it over (already shape-checked). */
export interface RunRequest {
  input: string;
  /** Required unless a thread that exists names the workflow. */
  workflowSlug?: string;
  threadId?: string;
  contextSlugs?: string[];
  attachments?: AttachmentInput[];
  schema?: Record<string, unknown>;
  callback?: CallbackSpec;
  /** A model alias of the configuration instead of the workflow's (evaluations compare models). */
  model?: string;
  /** For a replay: the sha256 each attachment had in the original run (a changed one is refused). */
  attachmentHashes?: string[];
  /** Context versions to use instead of the current ones (a replay uses what the original run did). */
  contextVersions?: Record<string, string>;
  /** Earlier turns given with the request instead of a stored thread's (a test case's), oldest first. */
  history?: { role: "user" | "assistant"; content: string }[];
  /** Changes to the named workflow version, run without being saved (admin keys). */
  draft?: WorkflowDraft;
  /** Object runs: align the output's values with the input and attachments (see lib/grounding/). */
  grounding?: boolean;
}

/**
 * Everything resolved and checked before a run is stored and the model is called: a request that
 * can never succeed never gets this far (it is a 4xx from the planner, and no run exists).
 */
export interface Plan {
  id: string;
  operation: RunOperation;
  principal: Principal;
  workflow: CatalogWorkflow;
  client: ModelClient;
  /** For object operations: the caller's schema, screened and compiled. */
  prepared?: PreparedSchema;
  prompt: Prompt;
  /** Object runs asking for grounding or with `x-grounded` properties: the sources and what must be grounded. */
  grounding?: RunGrounding;
  callback?: CallbackSpec;
  /** The conversation this run belongs to, and whether this run starts it. */
  thread?: { id: string; isNew: boolean };
  /** The run as it is stored when it starts (status and queued request are the service's). */
  record: Omit<NewRun, "status" | "request">;
}

/** A run being executed: its plan, and what it has spent so far across attempts. */
export interface Execution {
  plan: Plan;
  log: Logger;
  startedAt: number;
  /** Tokens so far, across attempts: billed and recorded whether the run succeeds or not. */
  usage: TokenUsage;
  attempts: number;
  /** How the last attempt's output was held to the schema. */
  decoding?: DecodingMode;
  /** What the run tolerated or fell back from (the schema's, then each attempt's), without repeats. */
  warnings: string[];
  /** The run's span (a stand-in when tracing is off); model attempts and validation are its children. */
  span: TraceSpan;
  /** For streamed attempts: how the last one's text arrived. */
  pace?: PaceRecorder;
  /** The key's rate and concurrency meters as the run's admission left them (for RateLimit headers). */
  quota: MeterState[];
  /** When the run's deadline passes (epoch ms), once it is executing. */
  deadlineAt?: number;
  /**
   * A streamed attempt still under way: its request and the text written so far, so that a run
   * ended by its deadline while the attempt is left behind still counts what the attempt used.
   */
  inFlight?: { request: ModelRequest; text: string };
  /** For streamed attempts: the current attempt's text so far (kept on the run's problem when it is cancelled). */
  partial?: string;
  /** Before each attempt after the first: reserves what it may cost (throws when a budget cannot hold it). */
  beforeAttempt?: (attempt: number) => Promise<void>;
}

/** Where a run request came from, beyond its body: the caller's W3C `traceparent` header. */
export interface RunOrigin {
  traceparent?: string | null;
  /** Cancels the run (recorded as `cancelled`), e.g. when the evaluation it belongs to is cancelled. */
  signal?: AbortSignal;
  /** The evaluation the run is made for: recorded with the run, which stays an ordinary one. */
  evaluationId?: string;
  /** Told the run's id once it is admitted and stored, before the model is called (a caller that answers before the run ends). */
  onStarted?: (runId: string, quota: MeterState[]) => void;
}
