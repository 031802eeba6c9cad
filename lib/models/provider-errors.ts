import "server-only";
import { APICallError } from "@ai-sdk/provider";
import { GenserveError, isGenserveError } from "../errors";
import { RESPONSE_TOO_LARGE } from "../net/http-fetch";

/** What a provider's HTTP status means, in words a caller can act on. */
function statusMeaning(status: number): string {
  if (status === 400) return "it refused the request";
  if (status === 401 || status === 403) return "authentication with the provider failed; check the model's apiKey in the configuration";
  if (status === 404) return "the provider does not know the model or endpoint; check the model configuration";
  if (status === 408) return "the provider timed out";
  if (status === 413) return "the request was too large for the provider";
  if (status === 422) return "the provider could not process the request";
  if (status === 429) return "the provider is rate-limiting requests";
  if (status >= 500) return "the provider had a server error";
  return "the provider refused the request";
}

/**
 * Turns whatever a provider threw into a GenserveError: upstream failures become `model_error`
 * (retryable as the provider said), a time-out `model_timeout`. The detail a caller sees names the
 * provider's status and what it means, never the provider's own words: error bodies can echo the
 * credential ("Incorrect API key provided: sk-…"), request content or internal addresses. The
 * original error stays on `cause`, for the server log only (scrubbed of secrets there).
 */
export function toModelError(error: unknown, signal: AbortSignal): GenserveError {
  if (isGenserveError(error)) return error;
  // The run's deadline, a cancel or a shutdown: the signal carries the error to report.
  if (signal.aborted && isGenserveError(signal.reason)) return signal.reason;
  const timedOut = signal.aborted && (signal.reason as { name?: string } | undefined)?.name === "TimeoutError";
  if (timedOut) return new GenserveError("model_timeout", { detail: "The model did not finish within the workflow's time-out." });
  const bound = causeNamed(error, RESPONSE_TOO_LARGE);
  if (bound) {
    // Not transient: the same provider would answer the same way again.
    return new GenserveError("model_error", { detail: `The model provider's response was cut off: ${bound.message}.`, retryable: false, cause: error });
  }
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    if (status === undefined) {
      return new GenserveError("model_error", { detail: `The model provider could not be reached${networkCode(error.cause)}.`, retryable: error.isRetryable, cause: error });
    }
    const retryAfterMs = retryAfter(error.responseHeaders);
    return new GenserveError("model_error", {
      detail: `The model provider answered ${status}: ${statusMeaning(status)}.`,
      retryable: error.isRetryable,
      cause: error,
      upstreamStatus: status,
      retryAfterMs,
      // What the provider asked for is what the caller should wait too.
      ...(retryAfterMs !== undefined && error.isRetryable && { headers: { "Retry-After": String(Math.ceil(retryAfterMs / 1000)) } }),
    });
  }
  const name = error instanceof Error ? error.name : "Error";
  if (name === "AbortError" || name === "TimeoutError") {
    return new GenserveError("model_timeout", { detail: "The model call was aborted before it finished." });
  }
  return new GenserveError("model_error", { detail: `The model call failed${networkCode(error)}.`, cause: error });
}

/** The first error named `name` on an error or its causes. */
function causeNamed(error: unknown, name: string): Error | undefined {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof Error && e.name === name) return e;
  }
  return undefined;
}

/** A system error code (ECONNREFUSED, ENOTFOUND…) found on an error or its causes, as " (CODE)". */
function networkCode(error: unknown): string {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^E[A-Z0-9_]+$/.test(code)) return ` (${code})`;
  }
  return "";
}

/** Retry-After in milliseconds (seconds or an HTTP date), when the provider sent one. */
function retryAfter(headers: Record<string, string> | undefined): number | undefined {
  const value = headers?.["retry-after"];
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

/** 413 with the numbers: the prompt alone fills the model's context window. */
export function windowExceeded(alias: string, promptTokens: number, contextWindow: number): GenserveError {
  return new GenserveError("payload_too_large", {
    detail: `The prompt (instructions, contexts, attachments, schema and input) is ${promptTokens} tokens; model "${alias}" has a ${contextWindow}-token context window, which leaves no room for the output. Shorten the input or the schema, or configure a larger contextWindow.`,
  });
}

/** What the server log may say about a provider failure (the caller never sees it). */
export function providerFailureDetails(error: GenserveError): Record<string, unknown> | undefined {
  const cause = error.cause;
  if (cause === undefined) return undefined;
  if (APICallError.isInstance(cause)) {
    return { status: cause.statusCode, message: cause.message, body: cause.responseBody?.slice(0, 2_000) };
  }
  return { name: (cause as Error)?.name, message: (cause as Error)?.message ?? String(cause), code: (cause as { code?: unknown })?.code };
}
