import "server-only";
import { diffJson, type Difference } from "../json/structural-diff";
import { GenserveError, isGenserveError } from "../errors";
import type { Catalog } from "../catalog/workflow-catalog";
import type { Principal } from "../keys/api-keys";
import type { RunMetadata } from "../domain/run-vocabulary";
import type { RunRecord } from "../store/store-types";
import type { RunService } from "./run-service";
import type { RunRequest } from "./run-request";

export interface Replay {
  runId: string;
  originalRunId: string;
  /** The workflow reference the replay ran (the original's version, or the one asked for). */
  workflowSlug: string;
  output: unknown;
  metadata: RunMetadata;
  /** The new output against the original's, field by field (JSON Pointers). */
  differences: Difference[];
  identical: boolean;
  /** What could not be the same as the original's (stated, never silent). */
  notes: string[];
}

/**
 * Runs a stored run's request again with the same bundle: the workflow version and the context
 * versions it recorded, its schema and input, its URL attachments fetched again and checked by hash.
 * Another version or label may be named instead (`slug@staging`): the workflow's own contexts are
 * then that version's, the request's extra ones stay pinned. Inline attachments cannot be replayed
 * (genserve keeps no attachment bytes): refused with the reason. The replay is an ordinary run of
 * the caller's (metered); it sends no callback, and an original streamed run replays as a generated one.
 */
export async function replayRun(deps: { catalog: Catalog; runs: RunService }, caller: Principal, original: RunRecord, options: { workflowSlug?: string } = {}): Promise<Replay> {
  const notes: string[] = [];
  const inline = original.attachments.filter((a) => a.source === "inline");
  if (inline.length > 0) {
    throw new GenserveError("conflict", {
      detail: `Run "${original.id}" had ${inline.length} inline attachment(s); genserve keeps no attachment bytes, so it cannot be replayed exactly.`,
      errors: inline.map((a) => ({ path: `/attachments/${a.index}`, message: "sent inline and not kept" })),
    });
  }
  if (original.operation !== "generate.text" && original.schema === null) {
    throw new GenserveError("conflict", { detail: `Run "${original.id}" recorded no schema; it cannot be replayed.` });
  }
  const same = options.workflowSlug === undefined;
  const pinnedRef = original.workflowVersion === null ? original.workflowSlug : `${original.workflowSlug}@${original.workflowVersion}`;
  const ref = options.workflowSlug ?? pinnedRef;
  if (same && original.workflowVersion === "config") notes.push("The workflow comes from the configuration file, which keeps no versions: it replays as the file has it now.");
  // The version the original ran (for its own contexts and model); gone from the configuration file, it is null.
  const originalWorkflow =
    original.workflowVersion === null
      ? null
      : await deps.catalog.forProject(caller.projectId).version(original.workflowSlug, original.workflowVersion).catch((error: unknown) => {
          if (isGenserveError(error) && error.code === "workflow_not_found") return null;
          throw error;
        });
  // A draft run replays with the definition that ran (its own contexts, model and limits), on its base version.
  const draft = same && original.draft ? original.draft.definition : undefined;
  if (original.draft && !same) notes.push(`The original was a draft run on version ${original.draft.base}; it replays on ${ref} as saved, without the draft's edits.`);
  const ownContexts = draft?.contexts ?? originalWorkflow?.contexts ?? [];
  const requested = original.contextSlugs.filter((c) => !ownContexts.includes(c));
  const contextVersions = Object.fromEntries(Object.entries(original.contextVersions).filter(([slug]) => same || requested.includes(slug)));
  const request: RunRequest = {
    input: original.input,
    workflowSlug: ref,
    contextSlugs: requested,
    contextVersions,
    ...(original.schema !== null && { schema: original.schema as Record<string, unknown> }),
    ...(original.attachments.length > 0 && {
      attachments: original.attachments.map((a) => ({ file: a.url!, mimeType: a.mimeType })),
      attachmentHashes: original.attachments.map((a) => a.sha256),
    }),
    ...(draft && { draft }),
    // The request's own earlier messages (OpenAI's, a suite case's); a thread's are not replayed.
    ...(original.history && { history: original.history }),
    // The model the original ran on, when it was not its workflow's (an evaluation's override).
    ...(same && !draft && originalWorkflow && original.modelTag && original.modelTag !== originalWorkflow.model && { model: original.modelTag }),
  };
  if (original.callback) notes.push("The original's callback is not sent for a replay.");
  const result =
    original.operation === "generate.text"
      ? await deps.runs.generateText(caller, request).then((r) => ({ runId: r.runId, output: r.text as unknown, metadata: r.metadata }))
      : await deps.runs.generateObject(caller, request).then((r) => ({ runId: r.runId, output: r.object, metadata: r.metadata }));
  const differences = original.output === null ? [{ path: "/", kind: "changed" as const, left: null, right: result.output }] : diffJson(original.output, result.output);
  if (original.status !== "succeeded") notes.push(`The original run ${original.status}; its output is compared as null.`);
  return { runId: result.runId, originalRunId: original.id, workflowSlug: ref, output: result.output, metadata: result.metadata, differences, identical: differences.length === 0, notes };
}
