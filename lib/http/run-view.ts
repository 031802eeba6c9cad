import "server-only";
import { summarizeGrounding } from "../domain/grounding";
import type { CallbackSpec } from "../domain/run-vocabulary";
import type { RunListBounds, RunListItem, RunRecord } from "../store/store-types";

/** What a masked secret looks like in a view. */
export const MASK = "[hidden]";

/** A URL with any `user:password@` replaced by the mask (URLs that do not parse are kept as they are). */
export function maskUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (!url.username && !url.password) return raw;
    url.username = MASK;
    url.password = "";
    return url.toString();
  } catch {
    return raw;
  }
}

/**
 * A callback as any view shows it: header names kept, values masked (a receiver's Authorization
 * header is a secret the caller handed over, never to be shown again), credentials in the URL masked.
 */
export function maskCallback(callback: CallbackSpec): CallbackSpec {
  return {
    ...callback,
    url: maskUrl(callback.url),
    ...(callback.headers && { headers: Object.fromEntries(Object.keys(callback.headers).map((name) => [name, MASK])) }),
  };
}

/** A stored run as the API, the playground and the CLI show it: secrets masked. */
export function runView(run: RunRecord) {
  return { ...commonView(run), input: run.input, history: run.history, schema: run.schema, callback: run.callback && maskCallback(run.callback), output: run.output };
}

/** A listed run (previews and sizes; the run itself has them whole), as `runView` shows a run. */
export function runListView(run: RunListItem) {
  return {
    ...commonView(run),
    input: run.input,
    inputBytes: run.inputBytes,
    schema: run.schema,
    callback: run.callback && maskCallback(run.callback),
    output: run.output,
    outputPreview: run.outputPreview,
    outputBytes: run.outputBytes,
    truncated: run.truncated,
  };
}

/** What a run list reads of each run and how far a search looks, from the configuration's limits. */
export const runListBounds = (limits: { runPreviewChars: number; runSearchChars: number; runSearchBytes: number }): RunListBounds => ({ previewChars: limits.runPreviewChars, searchChars: limits.runSearchChars, searchBytes: limits.runSearchBytes });

/** The fields a run and a listed run show alike. */
function commonView(run: RunRecord | RunListItem) {
  return {
    id: run.id,
    operation: run.operation,
    workflowSlug: run.workflowSlug,
    status: run.status,
    contextSlugs: run.contextSlugs,
    contextChunks: run.contextChunks,
    workflowVersion: run.workflowVersion,
    workflowLabel: run.workflowLabel,
    draft: run.draft,
    contextVersions: run.contextVersions,
    promptHash: run.promptHash,
    schemaHash: run.schemaHash,
    attachments: run.attachments.map((a) => (a.url === undefined ? a : { ...a, url: maskUrl(a.url) })),
    error: run.error,
    metadata: {
      runId: run.id,
      cost: run.cost,
      model: { name: run.modelName ?? "", tag: run.modelTag ?? "" },
      durationInMs: run.durationMs ?? 0,
      inputTokens: run.inputTokens,
      outputTokens: run.outputTokens,
      ...(run.warnings.length > 0 && { warnings: run.warnings }),
      ...("grounding" in run && run.grounding && { grounding: summarizeGrounding(run.grounding) }),
    },
    attempts: run.attempts,
    decoding: run.decoding,
    promptTokens: run.promptTokens,
    outputTokenLimit: run.outputTokenLimit,
    createdAt: run.createdAt,
    finishedAt: run.finishedAt,
    traceId: run.traceparent?.split("-")[1] ?? null,
    evaluationId: run.evaluationId,
  };
}

