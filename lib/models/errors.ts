import { APICallError } from "ai";
import { GenserveError, isGenserveError } from "../errors";

/**
 * Turns whatever a provider threw into a GenserveError: upstream failures become `model_error`
 * (retryable as the provider said), a time-out `model_timeout`. Provider messages are summarised:
 * they can quote request content, never keys.
 */
export function toModelError(error: unknown, signal: AbortSignal): GenserveError {
  if (isGenserveError(error)) return error;
  const timedOut = signal.aborted && (signal.reason as { name?: string } | undefined)?.name === "TimeoutError";
  if (timedOut) return new GenserveError("model_timeout", { detail: "The model did not finish within the workflow's time-out." });
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    return new GenserveError("model_error", {
      detail: `The model provider answered ${status ?? "with an error"}: ${summarise(error.message)}`,
      retryable: error.isRetryable,
      cause: error,
    });
  }
  const name = error instanceof Error ? error.name : "Error";
  const message = error instanceof Error ? error.message : String(error);
  if (name === "AbortError" || name === "TimeoutError") {
    return new GenserveError("model_timeout", { detail: "The model call was aborted before it finished." });
  }
  return new GenserveError("model_error", { detail: `The model call failed: ${summarise(message)}`, cause: error });
}

function summarise(message: string): string {
  const oneLine = message.replace(/\s+/g, " ").trim();
  return oneLine.length > 300 ? `${oneLine.slice(0, 300)}…` : oneLine;
}
