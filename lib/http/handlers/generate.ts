import "server-only";
import { checkSchemaRequest, generateObjectRequest, generateTextRequest, streamObjectRequest } from "../../api/requests";
import { generateObjectResponse, generateTextResponse, queuedRunResponse, schemaCheckSchema } from "../../api/responses";
import { GenserveError, isGenserveError, validationError } from "../../errors";
import { canonicalJson, sha256 } from "../../schema/canonical";
import type { IdempotencyLedger } from "../../runs/idempotency-ledger";
import { CANCEL_ON_DISCONNECT, FIELDS, OBJECT_ONLY, RUN_ERRORS, RUN_HEADERS, STREAM_CONTENT } from "../doc-parts";
import { EDITOR, endpoint, VIEWER } from "../endpoint";

/** Runs cost money: viewers read them, editors and admins make them. */
const RUN = EDITOR("Only editor and admin keys may run workflows; viewer keys read runs.");
import { problemResponse, reply } from "../problem";
import { quotaHeaders, type RouteContext } from "../route";
import { streamResponse } from "../stream-format";

/**
 * The shared flow of the two generate operations: auth, body validation, then the run (admitted
 * against the key's limits and budgets, whose state the RateLimit headers report) — synchronous, or queued with `Prefer: respond-async` (202) — under an optional
 * `Idempotency-Key` (a repeat within 24 h replays the first response instead of running again).
 */
async function generate(ctx: RouteContext<Record<string, string>>, operation: "generate.object" | "generate.text"): Promise<Response> {
  const { request, runtime } = ctx;
  const caller = await ctx.principal();
  const key = request.headers.get("idempotency-key");
  if (key !== null && (key.length < 1 || key.length > 255)) {
    throw validationError([{ path: "Idempotency-Key", message: "must be 1-255 characters" }]);
  }
  const respondAsync = /(^|[\s,;])respond-async([\s,;]|$)/i.test(request.headers.get("prefer") ?? "");
  const body = operation === "generate.object" ? { operation, request: await ctx.body(generateObjectRequest) } : { operation, request: await ctx.body(generateTextRequest) };

  const origin = { traceparent: request.headers.get("traceparent"), signal: respondAsync ? undefined : cancelOnDisconnect(request) };
  const run = async (): Promise<Response> => {
    if (respondAsync) {
      const { runId, quota } = await runtime.runs.startAsync(caller, operation, body.request, origin);
      return reply(
        queuedRunResponse,
        { runId, status: "queued" },
        { status: 202, headers: { "X-Run-ID": runId, Location: `/api/v1/runs/${runId}`, "Preference-Applied": "respond-async", ...quotaHeaders(quota) } },
      );
    }
    if (body.operation === "generate.object") {
      const result = await runtime.runs.generateObject(caller, body.request, origin);
      return reply(generateObjectResponse, { object: result.object, metadata: result.metadata, ...(result.grounding && { grounding: result.grounding }) }, { headers: { "X-Run-ID": result.runId, ...quotaHeaders(result.quota) } });
    }
    const result = await runtime.runs.generateText(caller, body.request, origin);
    return reply(generateTextResponse, { text: result.text, metadata: result.metadata }, { headers: { "X-Run-ID": result.runId, ...quotaHeaders(result.quota) } });
  };

  if (key === null) return run();
  return idempotent(runtime.services.idempotency, caller.keyId, key, sha256(canonicalJson({ operation, body: body.request, respondAsync })), run, runtime.logger);
}

/**
 * With `?cancelOnDisconnect=true`, a caller that goes away (closes the connection, as a browser's
 * aborted fetch does) stops the run at once: the model call is aborted and the run recorded
 * `cancelled`, billed for what it used. Without it the run completes and is recorded, as before.
 */
function cancelOnDisconnect(request: Request): AbortSignal | undefined {
  if (new URL(request.url).searchParams.get("cancelOnDisconnect") !== "true") return undefined;
  const cancel = new AbortController();
  const gone = () => cancel.abort(new GenserveError("cancelled", { detail: "The client disconnected and asked for the run to be cancelled." }));
  if (request.signal.aborted) gone();
  else request.signal.addEventListener("abort", gone, { once: true });
  return cancel.signal;
}

async function idempotent(
  ledger: IdempotencyLedger,
  keyId: string,
  key: string,
  requestHash: string,
  run: () => Promise<Response>,
  log: Parameters<typeof problemResponse>[1],
): Promise<Response> {
  const existing = await ledger.begin(keyId, key, requestHash);
  if (existing) {
    if (existing.requestHash !== requestHash) {
      throw new GenserveError("idempotency_mismatch", { detail: "This Idempotency-Key was already used with a different request body." });
    }
    if (existing.state === "in_progress") {
      throw new GenserveError("idempotency_in_progress", { detail: "The first request with this Idempotency-Key is still running; retry later.", headers: { "Retry-After": "1" } });
    }
    const body = existing.responseBody ?? "";
    const isProblem = (existing.responseStatus ?? 200) >= 400;
    return new Response(body, {
      status: existing.responseStatus ?? 200,
      headers: {
        "Content-Type": isProblem ? "application/problem+json" : "application/json",
        "Cache-Control": "no-store",
        "Idempotent-Replayed": "true",
        ...(existing.runId ? { "X-Run-ID": existing.runId } : {}),
        ...(existing.responseStatus === 202 && existing.runId ? { Location: `/api/v1/runs/${existing.runId}` } : {}),
      },
    });
  }
  let response: Response;
  try {
    response = await run();
  } catch (error) {
    if (isGenserveError(error) && error.runId) {
      // The run started and failed: that outcome is the answer to every repeat.
      response = problemResponse(error, log);
    } else {
      await ledger.release(keyId, key);
      throw error;
    }
  }
  const text = await response.text();
  await ledger.complete(keyId, key, { runId: response.headers.get("X-Run-ID"), status: response.status, body: text });
  return new Response(text, { status: response.status, headers: response.headers });
}

export const endpoints = [
  endpoint({
    method: "POST",
    path: "/api/v1/generate/object",
    operationId: "generateObject",
    summary: "Generate one JSON value that validates against the given schema",
    auth: RUN,
    parameters: [CANCEL_ON_DISCONNECT],
    request: { body: generateObjectRequest, required: true },
    responses: {
      "200": { description: "The validated object and run metadata.", body: generateObjectResponse, headers: RUN_HEADERS },
      "202": { description: "Prefer: respond-async — the run is queued.", body: queuedRunResponse, headers: RUN_HEADERS },
    },
    errors: [...RUN_ERRORS, "idempotency_in_progress", "idempotency_mismatch", "run_queue_full"],
    handler: (ctx) => generate(ctx, "generate.object"),
  }),
  endpoint({
    method: "POST",
    path: "/api/v1/stream/object",
    operationId: "streamObject",
    summary: "Stream a JSON value as it is generated",
    description:
      "Server-Sent Events by default; NDJSON with `Accept: application/x-ndjson`. Data items are StreamItem values whose `text` pieces concatenate to the final JSON document. The stream ends with `event: done` (`{runId, object, metadata}`) or `event: error` (a Problem); `event: restart` means a retry began and earlier items (and field events) must be discarded. With `?fields=true`, `event: field` (StreamField) follows the item that completes each value.",
    auth: RUN,
    parameters: [CANCEL_ON_DISCONNECT, FIELDS],
    request: { body: streamObjectRequest, required: true },
    responses: { "200": { description: "The stream.", headers: RUN_HEADERS, content: STREAM_CONTENT } },
    errors: [...RUN_ERRORS, "thread_not_found", "thread_full"],
    /** Starts a streamed run and answers with its stream (the same one GET /runs/{id}/stream resumes). */
    handler: async ({ request, runtime, principal, body }) => {
      const caller = await principal();
      const input = await body(streamObjectRequest);
      const query = new URL(request.url).searchParams;
      const cancelOnDisconnect = query.get("cancelOnDisconnect") === "true";
      const fields = query.get("fields") === "true";
      const { runId, quota } = await runtime.runs.streamObject(caller, input, { traceparent: request.headers.get("traceparent") }, { fields });
      return streamResponse(runtime.hub, runId, {
        accept: request.headers.get("accept"),
        keepAliveMs: runtime.config.limits.streamKeepAliveMs,
        onDisconnect: () => runtime.runs.clientGone(runId, cancelOnDisconnect),
        headers: quotaHeaders(quota),
      });
    },
  }),
  endpoint({
    method: "POST",
    path: "/api/v1/generate/text",
    operationId: "generateText",
    summary: "Generate text",
    auth: RUN,
    parameters: [CANCEL_ON_DISCONNECT],
    request: { body: generateTextRequest, required: true },
    responses: {
      "200": { description: "The text and run metadata.", body: generateTextResponse, headers: RUN_HEADERS },
      "202": { description: "Prefer: respond-async — the run is queued.", body: queuedRunResponse, headers: RUN_HEADERS },
    },
    errors: [...RUN_ERRORS.filter((c) => !OBJECT_ONLY.has(c)), "idempotency_in_progress", "idempotency_mismatch", "run_queue_full"],
    handler: (ctx) => generate(ctx, "generate.text"),
  }),
  endpoint({
    method: "POST",
    path: "/api/v1/schemas/check",
    operationId: "checkSchema",
    summary: "What an object run would make of a schema, for a workflow's model, without running anything",
    auth: VIEWER,
    request: { body: checkSchemaRequest, required: true },
    responses: { "200": { description: "Problems that would refuse the schema, warnings, and how the workflow's model holds outputs to it.", body: schemaCheckSchema } },
    errors: ["validation_failed", "unauthorized", "forbidden", "workflow_not_found"],
    /** What an object run would make of a schema, for a workflow's model, without running anything (the playground's lint). */
    handler: async ({ runtime, principal, body }) => {
      const caller = await principal();
      // The schema's problems are the answer here, not a refusal.
      const input = await body(checkSchemaRequest, { callerSchema: "as data" });
      return reply(schemaCheckSchema, await runtime.runs.checkSchema(caller, input));
    },
  }),
];
