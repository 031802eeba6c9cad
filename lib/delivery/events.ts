import "server-only";
import type { CallbackSpec, RunMetadata, RunOperation } from "../domain/run-vocabulary";
import type { ProblemBody } from "../errors";
import type { EventRecord } from "../store/store-types";
import { newEventId } from "../ids";

/** Headers a caller's callback.headers may not set: ours, and hop-by-hop ones. */
const RESERVED = /^(content-type|content-length|host|connection|keep-alive|transfer-encoding|te|trailer|upgrade|proxy-.*|webhook-.*)$/i;

export function callbackHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(headers ?? {}).filter(([name]) => !RESERVED.test(name)));
}

/** The run.succeeded / run.failed / run.cancelled (problem `cancelled`) event of a generate run, as stored in the outbox. */
export function runEvent(options: {
  runId: string;
  keyId: string;
  operation: Exclude<RunOperation, "stream.object">;
  workflowSlug: string;
  callback: CallbackSpec;
  outcome: { object?: unknown; text?: string; error?: ProblemBody };
  metadata: RunMetadata;
  at: Date;
}): Omit<EventRecord, "status" | "attempts"> {
  const id = newEventId();
  const createdAt = options.at.toISOString();
  const data: Record<string, unknown> = {
    runId: options.runId,
    operation: options.operation,
    workflowSlug: options.workflowSlug,
    customProperties: options.callback.customProperties ?? {},
  };
  if (options.outcome.error) data.error = options.outcome.error;
  else if (options.operation === "generate.object") data.object = options.outcome.object;
  else data.text = options.outcome.text;
  data.metadata = options.metadata;
  const type = !options.outcome.error ? "run.succeeded" : options.outcome.error.code === "cancelled" ? "run.cancelled" : "run.failed";
  const payload = JSON.stringify({ type, id, createdAt, data });
  return { id, runId: options.runId, keyId: options.keyId, url: options.callback.url, headers: callbackHeaders(options.callback.headers), payload, nextAttemptAt: createdAt, createdAt };
}
