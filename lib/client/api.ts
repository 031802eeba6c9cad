/**
 * The playground's client for the public /api/v1 API: the same API programs use, typed with the
 * shared shapes. Its runs, streams, run reads, cancels and their errors go through the TypeScript
 * client package (lib/sdk), so every browser test exercises it; the rest are plain calls here.
 * Problem+json responses become ApiError with the stable `code`; every call forwards an
 * AbortSignal. Browser-safe.
 */
import type { Role } from "../domain/roles";
import type { z } from "zod";
import { createClient, GenserveApiError, type RunStreamEvent } from "../sdk/client";
import type { labelsSchema, replaySchema, shareSchema, workflowDiffSchema, workflowVersionsSchema } from "../api/lifecycle-shapes";
import type { AuditEventView } from "../api/audit-shapes";
import type { GenerateObjectRequest, GenerateTextRequest, StreamObjectRequest } from "../api/requests";
import type { threadSchema } from "../api/responses";
import type { CreateEvaluationRequest, EvaluationReport, EvaluationSummary, SuiteDocument } from "../api/suite-shapes";
import type { RunDraft } from "../domain/drafts";
import type { RunStatus } from "../domain/run-vocabulary";
import type { LimitsView, Quota } from "../domain/key-limits";
import type { RunMetadata } from "../domain/run-vocabulary";

/** An API key as GET /api/v1/keys shows it (never the key itself). */
export interface ApiKeyView {
  id: string;
  name: string;
  prefix: string;
  /** role === "admin". */
  admin: boolean;
  role: Role;
  projectId: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  limits: LimitsView;
}

/** GET /api/v1/usage. */
export interface UsageReport {
  from: string;
  to: string;
  groupBy: "workflow" | "model" | "key";
  bucket: "hour" | "day";
  groups: { group: string; runs: number; errors: number; inputTokens: number; outputTokens: number; costUsd: string; durationMsP50: number | null; durationMsP95: number | null }[];
  series: { at: string; runs: number; errors: number; costUsd: string }[];
}

/** A change of a key's limits: absent fields stay, null removes a limit. */
export type LimitsChange = { [K in keyof LimitsView]?: LimitsView[K] };

export interface FieldProblem {
  path: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly errors: FieldProblem[] = [],
    readonly runId?: string,
    /** output_invalid: what the model last returned, which `errors` describe. */
    readonly lastOutput?: string,
  ) {
    super(detail);
    this.name = "ApiError";
  }

  static fromProblem(status: number, body: unknown): ApiError {
    const p = (body ?? {}) as { code?: string; detail?: string; title?: string; errors?: FieldProblem[]; runId?: string; lastOutput?: unknown };
    return new ApiError(status, p.code ?? `http_${status}`, p.detail ?? p.title ?? `HTTP ${status}`, p.errors ?? [], p.runId, typeof p.lastOutput === "string" ? p.lastOutput : undefined);
  }
}

/** GET /api/v1/models: whether each configured model can run. */
export interface ModelStatus {
  alias: string;
  provider: string;
  /** Whether image attachments are passed to it. */
  vision: boolean;
  status:
    | { state: "loading" }
    | { state: "downloading"; downloadedBytes: number; totalBytes: number }
    | { state: "ready"; name: string }
    | { state: "unavailable"; detail: string; fix: string };
}

export interface WorkflowSummary {
  slug: string;
  description: string;
  model: string;
  contexts: string[];
  instructionsChars: number;
  /** An input (and for object runs a schema) to start from. */
  example?: { input: string; schema?: Record<string, unknown> };
  version: string;
  source: "config" | "api";
}
export interface ContextSummary {
  slug: string;
  title: string;
  size: number;
  version: string;
  source: "config" | "api";
}
export interface RunSummary {
  id: string;
  operation: "generate.object" | "generate.text" | "stream.object";
  workflowSlug: string;
  workflowVersion: string | null;
  workflowLabel: string | null;
  /** A draft run's base version, the definition that ran and what differs; null for runs of saved versions. */
  draft?: RunDraft | null;
  status: RunStatus;
  input: string;
  /** On GET /runs/{id}: the earlier messages the request itself gave, oldest first; null when none. */
  history?: { role: "user" | "assistant"; content: string }[] | null;
  schema: unknown;
  contextSlugs: string[];
  attachments: Record<string, unknown>[];
  callback: { url: string; customProperties?: Record<string, unknown> } | null;
  output: unknown;
  error: { code: string; detail: string; errors?: FieldProblem[]; lastOutput?: string } | null;
  metadata: RunMetadata;
  attempts: number;
  /** How the output was held to the schema: grammar, grammar+validate, provider, prompt, none. */
  decoding: string | null;
  createdAt: string;
  finishedAt: string | null;
  /** The test-suite evaluation the run was made for; null for others. */
  evaluationId?: string | null;
  /** Present on GET /runs/{id}: the callback event's delivery log. */
  deliveries?: DeliveryLog | null;
  /** In lists (GET /runs): the output's start, and the fields cut to a preview (`input`) or left out (null `schema`, `output`, `callback`). */
  outputPreview?: string | null;
  truncated?: ("input" | "schema" | "output" | "callback" | "draft")[];
}

export interface InboxEvent {
  receivedAt: string;
  headers: Record<string, string>;
  body: unknown;
  verified: boolean;
}

export interface DeliveryLog {
  eventId: string;
  url: string;
  status: "pending" | "delivered" | "dead";
  attempts: number;
  nextAttemptAt: string | null;
  log: { attemptedAt: string; statusCode: number | null; error: string | null; durationMs: number; nextAttemptAt: string | null }[];
}

export type StreamEvent =
  | { type: "item"; id: number; text: string }
  | { type: "restart"; attempt: number }
  | { type: "done"; runId: string; object: unknown; metadata: RunMetadata }
  | { type: "error"; error: ApiError };

export interface SuiteSummary {
  slug: string;
  version: number;
  keyId: string;
  cases: number;
  workflow: string | null;
  description: string | null;
  updatedAt: string;
}

export interface SuiteView {
  slug: string;
  version: number;
  keyId: string;
  createdAt: string;
  updatedAt: string;
  document: SuiteDocument;
}

export type { EvaluationReport, EvaluationSummary, SuiteDocument };

export type WorkflowVersions = z.infer<typeof workflowVersionsSchema>;
export type WorkflowLabels = z.infer<typeof labelsSchema>;
export type WorkflowDiff = z.infer<typeof workflowDiffSchema>;
export type Replay = z.infer<typeof replaySchema>;
export type ThreadView = z.infer<typeof threadSchema>;
export type Share = z.infer<typeof shareSchema>;

export interface ApiClient {
  /** Asks the server to stop a queued or running run (POST /runs/{id}/cancel). */
  cancelRun(id: string): Promise<void>;
  workflowVersions(slug: string, signal?: AbortSignal): Promise<WorkflowVersions>;
  workflowLabels(slug: string, signal?: AbortSignal): Promise<WorkflowLabels>;
  diffWorkflow(slug: string, from: string, to: string, signal?: AbortSignal): Promise<WorkflowDiff>;
  /** Moves a label at once, or with `requireSuite` starts the evaluation that decides it. */
  promote(slug: string, label: string, body: { version: string; requireSuite?: string; minPass?: number }): Promise<{ status?: "pending"; evaluationId?: string; version: string | null }>;
  replayRun(id: string, body: { workflowSlug?: string }): Promise<Replay>;
  shareRun(id: string, body: { expiresIn?: string; hideFields?: string[] }): Promise<Share>;
  listSuites(signal?: AbortSignal): Promise<SuiteSummary[]>;
  /** null when there is no such suite (404). */
  getSuite(slug: string, signal?: AbortSignal): Promise<SuiteView | null>;
  putSuite(slug: string, document: unknown): Promise<SuiteView>;
  deleteSuite(slug: string): Promise<void>;
  startEvaluation(slug: string, body: CreateEvaluationRequest): Promise<{ id: string }>;
  listEvaluations(slug: string, signal?: AbortSignal): Promise<EvaluationSummary[]>;
  getEvaluation(id: string, signal?: AbortSignal): Promise<EvaluationReport>;
  cancelEvaluation(id: string): Promise<EvaluationSummary>;
  listWorkflows(signal?: AbortSignal): Promise<WorkflowSummary[]>;
  listModels(signal?: AbortSignal): Promise<ModelStatus[]>;
  /** POST /api/v1/models/{alias}/download (admin keys): fetch an unavailable local model again. */
  retryModelDownload(alias: string): Promise<ModelStatus>;
  listContexts(signal?: AbortSignal): Promise<ContextSummary[]>;
  listRuns(params: { cursor?: string; status?: string; workflowSlug?: string; operation?: string; q?: string; from?: string; to?: string; limit?: number }, signal?: AbortSignal): Promise<{ runs: RunSummary[]; nextCursor: string | null }>;
  getRun(id: string, signal?: AbortSignal): Promise<RunSummary>;
  /** A page of a thread's turns (oldest first, or with `newest` the newest, newest first); null when there is none yet (404: its first run has not ended). */
  getThread(id: string, signal?: AbortSignal, page?: { newest?: boolean; limit?: number }): Promise<ThreadView | null>;
  createInbox(signal?: AbortSignal): Promise<{ id: string; url: string }>;
  me(signal?: AbortSignal): Promise<{ keyId: string; name: string; admin: boolean; role: Role; project: { id: string; slug: string; name: string }; limits: LimitsView; quotas: Quota[] }>;
  listKeys(signal?: AbortSignal): Promise<ApiKeyView[]>;
  /** GET /api/v1/audit (admin keys): a page of the audit log, newest first. */
  listAudit(params: AuditFilters & { cursor?: string }, signal?: AbortSignal): Promise<{ events: AuditEventView[]; nextCursor: string | null }>;
  getKey(id: string, signal?: AbortSignal): Promise<ApiKeyView & { quotas: Quota[] }>;
  createKey(body: { name: string; role?: Role; limits?: LimitsChange }): Promise<ApiKeyView & { key: string; webhookSecret: string }>;
  updateKey(id: string, body: { name?: string; limits?: LimitsChange }): Promise<ApiKeyView>;
  revokeKey(id: string): Promise<void>;
  usage(params: { from?: string; to?: string; groupBy: "workflow" | "model" | "key"; bucket?: "hour" | "day" }, signal?: AbortSignal): Promise<UsageReport>;
  getEntry(kind: "workflows" | "contexts", slug: string, signal?: AbortSignal): Promise<Record<string, unknown>>;
  putEntry(kind: "workflows" | "contexts", slug: string, body: unknown): Promise<Record<string, unknown>>;
  deleteEntry(kind: "workflows" | "contexts", slug: string): Promise<void>;
  /** A page of the inbox's deliveries, newest first (`nextCursor`: the older ones). */
  getInbox(id: string, signal?: AbortSignal, page?: { limit?: number; cursor?: string }): Promise<{ id: string; url: string; events: InboxEvent[]; nextCursor?: string | null }>;
  checkSchema(body: { schema: Record<string, unknown>; workflowSlug?: string }, signal?: AbortSignal): Promise<SchemaCheck>;
  generateObject(body: GenerateObjectRequest, signal?: AbortSignal): Promise<{ object: unknown; metadata: RunMetadata }>;
  generateText(body: GenerateTextRequest, signal?: AbortSignal): Promise<{ text: string; metadata: RunMetadata }>;
  /** Starts a stream; resolves with the run id once the response headers arrive, then yields events. */
  streamObject(body: StreamObjectRequest, signal?: AbortSignal): Promise<{ runId: string; events: AsyncIterable<StreamEvent> }>;
}

/** POST /api/v1/schemas/check: what an object run would make of a schema on a workflow's model. */
export interface SchemaCheck {
  accepted: boolean;
  problems: FieldProblem[];
  warnings: string[];
  model: { alias: string; provider: string } | null;
  support: { mode: "grammar" | "provider" | "prompt"; exact: boolean; strict?: boolean; notes: string[] } | null;
}

/** The audit log's filters, as GET /api/v1/audit takes them. */
export interface AuditFilters {
  actor?: string;
  action?: string;
  subject?: string;
  from?: string;
  to?: string;
}

/**
 * A client of the API. `credential`: an API key (sent in Api-Key), or a signed-in browser's session
 * (its cookie goes by itself; the CSRF token in X-CSRF-Token, which changes need).
 */
export function createApiClient(credential: string | { csrfToken: string }, baseUrl = ""): ApiClient {
  const auth: Record<string, string> = typeof credential === "string" ? { "Api-Key": credential } : { "X-CSRF-Token": credential.csrfToken };
  // The playground shows a failure as it happened: no retries of its own.
  const sdk = createClient({ baseURL: baseUrl, ...(typeof credential === "string" ? { apiKey: credential } : { headers: auth }), maxRetries: 0 });
  const request = async (path: string, init: RequestInit & { signal?: AbortSignal } = {}): Promise<Response> => {
    const response = await fetch(`${baseUrl}${path}`, {
      ...init,
      credentials: "same-origin",
      headers: { ...auth, ...(init.body ? { "Content-Type": "application/json" } : {}), ...init.headers },
    });
    if (!response.ok) {
      const body = await response.json().catch(() => undefined);
      throw ApiError.fromProblem(response.status, body);
    }
    return response;
  };
  const getJson = async <T>(path: string, signal?: AbortSignal) => (await (await request(path, { signal })).json()) as T;
  const postJson = async <T>(path: string, body: unknown, signal?: AbortSignal) =>
    (await (await request(path, { method: "POST", body: JSON.stringify(body), signal })).json()) as T;

  const suitePath = (slug: string) => `/api/v1/suites/${encodeURIComponent(slug)}`;
  const workflowPath = (slug: string) => `/api/v1/workflows/${encodeURIComponent(slug)}`;
  return {
    workflowVersions: (slug, signal) => getJson(`${workflowPath(slug)}/versions`, signal),
    workflowLabels: (slug, signal) => getJson(`${workflowPath(slug)}/labels`, signal),
    diffWorkflow: (slug, from, to, signal) => getJson(`${workflowPath(slug)}/diff?${new URLSearchParams({ from, to })}`, signal),
    promote: (slug, label, body) => postJson(`${workflowPath(slug)}/labels/${encodeURIComponent(label)}`, body),
    replayRun: (id, body) => postJson(`/api/v1/runs/${encodeURIComponent(id)}/replay`, body),
    shareRun: (id, body) => postJson(`/api/v1/runs/${encodeURIComponent(id)}/share`, body),
    listSuites: async (signal) => (await getJson<{ suites: SuiteSummary[] }>("/api/v1/suites", signal)).suites,
    getSuite: async (slug, signal) => {
      try {
        return await getJson<SuiteView>(suitePath(slug), signal);
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      }
    },
    putSuite: async (slug, document) => (await (await request(suitePath(slug), { method: "PUT", body: JSON.stringify(document) })).json()) as SuiteView,
    deleteSuite: async (slug) => void (await request(suitePath(slug), { method: "DELETE" })),
    startEvaluation: (slug, body) => postJson(`${suitePath(slug)}/evaluations`, body),
    listEvaluations: async (slug, signal) => (await getJson<{ evaluations: EvaluationSummary[] }>(`${suitePath(slug)}/evaluations?limit=20`, signal)).evaluations,
    getEvaluation: (id, signal) => getJson(`/api/v1/evaluations/${encodeURIComponent(id)}`, signal),
    cancelEvaluation: (id) => postJson(`/api/v1/evaluations/${encodeURIComponent(id)}/cancel`, {}),
    checkSchema: (body, signal) => postJson<SchemaCheck>("/api/v1/schemas/check", body, signal),
    listWorkflows: async (signal) => (await getJson<{ workflows: WorkflowSummary[] }>("/api/v1/workflows", signal)).workflows,
    listModels: async (signal) => (await getJson<{ models: ModelStatus[] }>("/api/v1/models", signal)).models,
    retryModelDownload: (alias) => postJson(`/api/v1/models/${encodeURIComponent(alias)}/download`, {}),
    listContexts: async (signal) => (await getJson<{ contexts: ContextSummary[] }>("/api/v1/contexts", signal)).contexts,
    listRuns: (params, signal) => {
      const query = new URLSearchParams();
      for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") query.set(k, String(v));
      return getJson(`/api/v1/runs?${query}`, signal);
    },
    getRun: (id, signal) => viaSdk(async () => (await sdk.getRun(id, { signal })) as unknown as RunSummary),
    getThread: async (id, signal, page = {}) => {
      const query = new URLSearchParams({ ...(page.newest && { order: "desc" }), ...(page.limit !== undefined && { limit: String(page.limit) }) }).toString();
      try {
        return await getJson<ThreadView>(`/api/v1/threads/${encodeURIComponent(id)}${query ? `?${query}` : ""}`, signal);
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      }
    },
    createInbox: (signal) => postJson("/api/v1/inbox", {}, signal),
    me: (signal) => getJson("/api/v1/me", signal),
    listKeys: async (signal) => (await getJson<{ keys: ApiKeyView[] }>("/api/v1/keys", signal)).keys,
    listAudit: (params, signal) => {
      const query = new URLSearchParams();
      for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") query.set(k, v);
      return getJson(`/api/v1/audit?${query}`, signal);
    },
    getKey: (id, signal) => getJson(`/api/v1/keys/${encodeURIComponent(id)}`, signal),
    createKey: (body) => postJson("/api/v1/keys", body),
    updateKey: async (id, body) => (await (await request(`/api/v1/keys/${encodeURIComponent(id)}`, { method: "PATCH", body: JSON.stringify(body) })).json()) as ApiKeyView,
    usage: (params, signal) => {
      const query = new URLSearchParams();
      for (const [k, v] of Object.entries(params)) if (v !== undefined) query.set(k, v);
      return getJson(`/api/v1/usage?${query}`, signal);
    },
    revokeKey: async (id) => void (await request(`/api/v1/keys/${encodeURIComponent(id)}`, { method: "DELETE" })),
    getEntry: (kind, slug, signal) => getJson(`/api/v1/${kind}/${encodeURIComponent(slug)}`, signal),
    putEntry: async (kind, slug, body) =>
      (await (await request(`/api/v1/${kind}/${encodeURIComponent(slug)}`, { method: "PUT", body: JSON.stringify(body) })).json()) as Record<string, unknown>,
    deleteEntry: async (kind, slug) => void (await request(`/api/v1/${kind}/${encodeURIComponent(slug)}`, { method: "DELETE" })),
    getInbox: (id, signal, page = {}) => {
      const query = new URLSearchParams();
      if (page.limit !== undefined) query.set("limit", String(page.limit));
      if (page.cursor !== undefined) query.set("cursor", page.cursor);
      const search = query.toString();
      return getJson(`/api/v1/inbox/${encodeURIComponent(id)}${search ? `?${search}` : ""}`, signal);
    },
    // The playground's Cancel (and leaving the page) aborts the request; the server then stops the
    // run at once (`cancelOnDisconnect`) and records it `cancelled` instead of finishing it unseen.
    cancelRun: (id) => viaSdk(async () => void (await sdk.cancelRun(id))),
    generateObject: (body, signal) =>
      viaSdk(async () => {
        const { object, metadata } = await sdk.generateObject({ ...runParams(body, signal), schema: body.schema });
        return { object, metadata };
      }),
    generateText: (body, signal) =>
      viaSdk(async () => {
        const { text, metadata } = await sdk.generateText(runParams(body, signal));
        return { text, metadata };
      }),
    streamObject: (body, signal) =>
      viaSdk(async () => {
        const { runId, events } = await sdk.streamEvents(body, { signal, cancelOnDisconnect: true });
        return { runId, events: playgroundEvents(events) };
      }),
  };
}

/** The package's errors as the playground's ApiError (components match on it). */
function toApiError(error: unknown): unknown {
  if (!(error instanceof GenserveApiError)) return error;
  const lastOutput = typeof error.problem.lastOutput === "string" ? error.problem.lastOutput : undefined;
  return new ApiError(error.status, error.code, error.detail, error.errors, error.runId, lastOutput);
}

async function viaSdk<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw toApiError(error);
  }
}

/** A generate request's body as the package's parameters; the playground's runs stop when it goes away. */
function runParams(body: GenerateObjectRequest | GenerateTextRequest, signal: AbortSignal | undefined) {
  return {
    workflow: body.workflowSlug,
    input: body.input,
    callback: body.callback,
    attachments: body.attachments,
    contexts: body.contextSlugs,
    draft: body.draft,
    signal,
    cancelOnAbort: true,
  };
}

/** The package's stream events as the playground's; the run's error becomes the last event. */
async function* playgroundEvents(events: AsyncGenerator<RunStreamEvent>): AsyncIterable<StreamEvent> {
  try {
    for await (const event of events) {
      if (event.type === "item") yield { type: "item", id: event.id, text: event.text };
      else if (event.type === "restart") yield { type: "restart", attempt: event.attempt };
      else yield { type: "done", runId: event.runId, object: event.object, metadata: event.metadata };
    }
  } catch (error) {
    const converted = toApiError(error);
    if (converted instanceof ApiError) yield { type: "error", error: converted };
    else throw error;
  }
}
