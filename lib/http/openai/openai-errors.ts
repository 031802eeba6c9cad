import "server-only";
import type { OpenAiErrorBody } from "../../api/openai-shapes";
import { isGenserveError, toProblem, type ErrorLog, type ProblemBody } from "../../errors";
import { json } from "../problem";

/**
 * genserve's errors in OpenAI's shape, for the OpenAI-compatible endpoints: `{error: {message,
 * type, param, code}}`. The status is genserve's own (a 404 for an unknown workflow, a 429 for a
 * key's rate limit…), the `code` genserve's stable code, except where OpenAI's clients know one of
 * their own (`invalid_api_key`, `model_not_found`). `X-Should-Retry` is what the official clients
 * obey instead of retrying every 409 and 5xx by status (twice, by default): it is `true` only for a
 * retryable refusal before any run exists (rate_limited, run_queue_full, storage_unavailable…).
 * An error that names a run (the run ran and was charged: output_invalid, model_error,
 * model_timeout, interrupted) or an unexpected one says `false`: a retry would be another charged
 * run, which the caller should decide on, not its client library.
 */

/** OpenAI's error type for a status. */
function typeOf(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 402) return "insufficient_quota";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

const OWN_CODES: Record<string, string> = { unauthorized: "invalid_api_key", workflow_not_found: "model_not_found" };

/**
 * Where genserve's request fields came from in the OpenAI request (JSON Pointer → OpenAI's parameter
 * name). The OpenAI request's own refusals (chat-request.ts) name the parameter already: a path
 * that is no pointer is kept as it is.
 */
export type ParamOf = (pointer: string) => string | null;

/** The run request's fields as the OpenAI request named them; `lastUser` is the index of the message that became the input. */
export function paramMapper(lastUser: number): ParamOf {
  return (pointer) => {
    if (pointer === "") return null;
    if (!pointer.startsWith("/")) return pointer;
    if (pointer.startsWith("/workflowSlug")) return "model";
    if (pointer.startsWith("/schema")) return `response_format.json_schema.schema${pointer.slice("/schema".length).replaceAll("/", ".")}`;
    if (pointer.startsWith("/input")) return `messages[${lastUser}].content`;
    if (pointer.startsWith("/attachments")) return `messages[${lastUser}].content`;
    if (pointer.startsWith("/history")) return "messages";
    return pointer.slice(1).replaceAll("/", ".");
  };
}

/**
 * One line, as OpenAI's messages are: a refused request's fields by their parameter names; an
 * invalid output's detail and its fields (JSON Pointers into the output, not the request); any
 * other problem's detail; and the run, when there is one.
 */
function messageOf(problem: ProblemBody, paramOf: ParamOf): string {
  const run = problem.runId ? ` (run ${problem.runId})` : "";
  const errors = problem.errors ?? [];
  if (problem.code === "validation_failed" && errors.length > 0) return errors.map((e) => `${paramOf(e.path) ?? "body"}: ${e.message}`).join("; ") + run;
  const fields = problem.code === "output_invalid" ? errors.map((e) => `${e.path || "(output)"}: ${e.message}`).join("; ") : "";
  return `${problem.detail}${fields ? ` ${fields}` : ""}${run}`;
}

/** Whether a client library may send the request again by itself (see the header comment). */
function shouldRetry(error: unknown): boolean {
  if (!isGenserveError(error)) return false;
  return error.retryable && error.runId === undefined && error.code !== "internal";
}

/** The body and status of an error in OpenAI's shape. */
export function toOpenAiError(error: unknown, log?: ErrorLog, paramOf: ParamOf = paramMapper(0)): { status: number; body: OpenAiErrorBody; retryable: boolean } {
  const problem = toProblem(error, log);
  // Earlier messages that do not fit the model's window: OpenAI's own refusal, which its clients know.
  if (problem.code === "payload_too_large" && problem.errors?.some((e) => e.path === "/history")) {
    return { status: 400, retryable: false, body: { error: { message: messageOf({ ...problem, errors: undefined }, paramOf), type: "invalid_request_error", param: "messages", code: "context_length_exceeded" } } };
  }
  // `param` names a parameter of the request: a refused one's, or `model` for the workflow.
  const first = problem.errors?.[0]?.path;
  const param = problem.code === "validation_failed" && first !== undefined ? paramOf(first) : ["workflow_not_found", "forbidden"].includes(problem.code) ? "model" : null;
  return {
    status: problem.status === 499 ? 400 : problem.status,
    retryable: shouldRetry(error),
    body: { error: { message: messageOf(problem, paramOf), type: typeOf(problem.status), param, code: OWN_CODES[problem.code] ?? problem.code } },
  };
}

/** An error as an OpenAI-shaped JSON response, with the error's own headers (Retry-After…) and the run's id when one exists. */
export function openAiErrorResponse(error: unknown, log?: ErrorLog, paramOf?: ParamOf): Response {
  const { status, body, retryable } = toOpenAiError(error, log, paramOf);
  const headers: Record<string, string> = { "X-Should-Retry": String(retryable) };
  if (isGenserveError(error)) Object.assign(headers, error.headers);
  const runId = isGenserveError(error) ? error.runId : undefined;
  if (runId) headers["X-Run-ID"] = runId;
  return json(body, { status, headers });
}
