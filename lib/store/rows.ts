import "server-only";
import type { RunDraft } from "../domain/drafts";
import type { GroundedLeaf } from "../domain/grounding";
import type { KeyLimits } from "../domain/key-limits";
import type { Role } from "../domain/roles";
import { GenserveError } from "../errors";
import type { ApiKeyRecord, CatalogKind, CatalogVersion, EventRecord, RunHistory, RunRecord, StrandedRun } from "./store-types";

/**
 * The tables' rows as the drivers return them (better-sqlite3, pg), and their mapping to the store's
 * records. Booleans arrive as 0/1 from SQLite and as booleans from PostgreSQL.
 */

export interface KeyRow {
  id: string;
  name: string;
  hash: string;
  prefix: string;
  admin: number | boolean;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  webhook_secret: string | null;
  previous_webhook_secret: string | null;
  previous_secret_until: string | null;
  rpm: number | null;
  tpm: number | null;
  concurrency: number | null;
  workflows: string | null;
  budget_daily_nanos: number | null;
  budget_monthly_nanos: number | null;
  project_id: string;
  role: string;
}

export interface CatalogRow {
  kind: CatalogKind;
  slug: string;
  version: number;
  body: string | null;
  key_id: string | null;
  created_at: string;
}

export const toCatalog = (row: CatalogRow): CatalogVersion => ({
  kind: row.kind,
  slug: row.slug,
  version: row.version,
  body: row.body === null ? null : (JSON.parse(row.body) as Record<string, unknown>),
  keyId: row.key_id,
  createdAt: row.created_at,
});

export interface EventRow {
  id: string;
  run_id: string;
  key_id: string;
  url: string;
  headers: string;
  payload: string;
  status: EventRecord["status"];
  attempts: number;
  next_attempt_at: string | null;
  created_at: string;
  traceparent?: string | null;
}

export const toEvent = (row: EventRow): EventRecord => ({
  id: row.id,
  runId: row.run_id,
  keyId: row.key_id,
  url: row.url,
  headers: JSON.parse(row.headers) as Record<string, string>,
  payload: row.payload,
  status: row.status,
  attempts: row.attempts,
  nextAttemptAt: row.next_attempt_at,
  createdAt: row.created_at,
  traceparent: row.traceparent ?? null,
});

export interface RunRow {
  id: string;
  operation: RunRecord["operation"];
  workflow_slug: string;
  key_id: string;
  status: RunRecord["status"];
  input: string;
  schema_json: string | null;
  context_slugs: string;
  context_chunks: string | null;
  workflow_version: string | null;
  context_versions: string | null;
  prompt_hash: string | null;
  schema_hash: string | null;
  attachments: string;
  callback: string | null;
  output_json: string | null;
  error_json: string | null;
  model_name: string | null;
  model_tag: string | null;
  input_tokens: number;
  output_tokens: number;
  cost: string;
  duration_ms: number | null;
  attempts: number;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  decoding: string | null;
  warnings_json?: string | null;
  request_json?: string | null;
  async_starts?: number;
  prompt_tokens: number | null;
  output_token_limit: number | null;
  traceparent?: string | null;
  evaluation_id?: string | null;
  workflow_label?: string | null;
  pace?: string | null;
  draft?: string | null;
  grounding_json?: string | null;
  history?: string | null;
}

export const toKey = (row: KeyRow): ApiKeyRecord => ({
  id: row.id,
  name: row.name,
  hash: row.hash,
  prefix: row.prefix,
  admin: row.role === "admin",
  role: row.role as Role,
  projectId: row.project_id,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
  revokedAt: row.revoked_at,
  webhookSecret: row.webhook_secret ?? "",
  limits: {
    rpm: row.rpm,
    tpm: row.tpm,
    concurrency: row.concurrency,
    workflows: row.workflows === null ? null : (JSON.parse(row.workflows) as string[]),
    budgetDailyNanos: row.budget_daily_nanos === null ? null : Number(row.budget_daily_nanos),
    budgetMonthlyNanos: row.budget_monthly_nanos === null ? null : Number(row.budget_monthly_nanos),
  },
});

const LIMIT_COLUMNS: Record<keyof KeyLimits, string> = {
  rpm: "rpm",
  tpm: "tpm",
  concurrency: "concurrency",
  workflows: "workflows",
  budgetDailyNanos: "budget_daily_nanos",
  budgetMonthlyNanos: "budget_monthly_nanos",
};

/** The columns and values a key update writes (only the fields the patch names; null clears a limit). */
export function keyPatch(patch: { name?: string; limits?: Partial<KeyLimits> }): { columns: string[]; values: (string | number | null)[] } {
  const columns: string[] = [];
  const values: (string | number | null)[] = [];
  if (patch.name !== undefined) (columns.push("name"), values.push(patch.name));
  for (const [field, value] of Object.entries(patch.limits ?? {}) as [keyof KeyLimits, KeyLimits[keyof KeyLimits]][]) {
    if (value === undefined) continue;
    columns.push(LIMIT_COLUMNS[field]);
    values.push(field === "workflows" ? (value === null ? null : JSON.stringify(value)) : (value as number | null));
  }
  return { columns, values };
}

/** A run's warnings as stored: none is NULL. */
export const warningsJson = (warnings: readonly string[]): string | null => (warnings.length === 0 ? null : JSON.stringify(warnings));

export const parseJson = <T>(text: string | null, fallback: T): T => (text === null ? fallback : (JSON.parse(text) as T));

export const toRun = (row: RunRow): RunRecord => ({
  id: row.id,
  operation: row.operation,
  workflowSlug: row.workflow_slug,
  keyId: row.key_id,
  status: row.status,
  input: row.input,
  schema: parseJson(row.schema_json, null),
  contextSlugs: parseJson(row.context_slugs, []),
  contextChunks: parseJson(row.context_chunks, []),
  workflowVersion: row.workflow_version,
  contextVersions: parseJson(row.context_versions, {}),
  promptHash: row.prompt_hash,
  schemaHash: row.schema_hash,
  attachments: parseJson(row.attachments, []),
  callback: parseJson(row.callback, null),
  output: parseJson(row.output_json, null),
  error: parseJson(row.error_json, null),
  modelName: row.model_name,
  modelTag: row.model_tag,
  decoding: row.decoding as RunRecord["decoding"],
  warnings: parseJson(row.warnings_json ?? null, []),
  promptTokens: row.prompt_tokens,
  outputTokenLimit: row.output_token_limit,
  inputTokens: row.input_tokens,
  outputTokens: row.output_tokens,
  cost: row.cost,
  durationMs: row.duration_ms,
  attempts: row.attempts,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  finishedAt: row.finished_at,
  traceparent: row.traceparent ?? null,
  evaluationId: row.evaluation_id ?? null,
  workflowLabel: row.workflow_label ?? null,
  pace: parseJson<[number, number][] | null>(row.pace ?? null, null),
  draft: parseJson<RunDraft | null>(row.draft ?? null, null),
  grounding: parseJson<GroundedLeaf[] | null>(row.grounding_json ?? null, null),
  history: parseJson<RunHistory | null>(row.history ?? null, null),
});

/** A stranded run with what reconciling it needs: its queued request, and how often it was started. */
export const toStranded = (row: RunRow): StrandedRun => ({
  ...toRun(row),
  request: parseJson(row.request_json ?? null, null),
  asyncStarts: row.async_starts ?? 0,
});

/** A thread, once per key and id (the same statement on both backends). */
export const THREAD_INSERT = "INSERT INTO threads (key_id, id, workflow_slug, created_at, updated_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key_id, id) DO NOTHING";

/** A retry's reservation asked for a run that is no longer running: refused, since nothing would settle it. */
export function runEnded(runId: string): GenserveError {
  return new GenserveError("conflict", { detail: `Run ${runId} has ended; nothing more is reserved for it.` });
}
