import "server-only";
import { GenserveError, isGenserveError, validationError } from "../errors";
import { canonicalJson, sha256 } from "../schema/canonical";
import type { Store } from "../store/types";
import { generateObjectRequest, generateTextRequest } from "../api/requests";
import { generateObjectResponse, generateTextResponse, queuedRunResponse } from "../api/responses";
import { problemResponse, reply } from "./problem";
import { quotaHeaders, type RouteContext } from "./route";

const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * The shared flow of the two generate operations: auth, body validation, then the run (admitted
 * against the key's limits and budgets, whose state the RateLimit headers report) — synchronous, or queued with `Prefer: respond-async` (202) — under an optional
 * `Idempotency-Key` (a repeat within 24 h replays the first response instead of running again).
 */
export async function generate(ctx: RouteContext<Record<string, never>>, operation: "generate.object" | "generate.text"): Promise<Response> {
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
      return reply(generateObjectResponse, { object: result.object, metadata: result.metadata }, { headers: { "X-Run-ID": result.runId, ...quotaHeaders(result.quota) } });
    }
    const result = await runtime.runs.generateText(caller, body.request, origin);
    return reply(generateTextResponse, { text: result.text, metadata: result.metadata }, { headers: { "X-Run-ID": result.runId, ...quotaHeaders(result.quota) } });
  };

  if (key === null) return run();
  return idempotent(runtime.store, caller.keyId, key, sha256(canonicalJson({ operation, body: body.request, respondAsync })), run, runtime.logger);
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
  store: Store,
  keyId: string,
  key: string,
  requestHash: string,
  run: () => Promise<Response>,
  log: Parameters<typeof problemResponse>[1],
): Promise<Response> {
  const existing = await store.idempotency.begin(keyId, key, requestHash, new Date().toISOString(), IDEMPOTENCY_WINDOW_MS);
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
      await store.idempotency.release(keyId, key);
      throw error;
    }
  }
  const text = await response.text();
  await store.idempotency.complete(keyId, key, { runId: response.headers.get("X-Run-ID"), status: response.status, body: text });
  return new Response(text, { status: response.status, headers: response.headers });
}
