/**
 * The client's errors: one class, `GenserveApiError`, carrying what the server's problem+json
 * says (`code`, `status`, `detail`, field `errors`, `runId`) and whether the same request may
 * succeed if sent again (`retryable`, from the server's error registry), with a subclass per kind
 * of failure a program handles differently. Browser-safe.
 */
import { ERROR_CODES } from "../errors";

/** One offending field of a request (a JSON Pointer into its body) or of a model's output. */
export interface FieldProblem {
  path: string;
  message: string;
}

/** The problem+json body of an error answer, as the server sends it. */
export interface ProblemDetails {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  code?: string;
  runId?: string;
  errors?: FieldProblem[];
  lastOutput?: string;
  [member: string]: unknown;
}

/**
 * Any error answered by genserve (or met on the way to it).
 *
 * @example
 * ```ts
 * try {
 *   await client.generateObject({ workflow: "extract-invoice", input, schema, callback });
 * } catch (error) {
 *   if (error instanceof GenserveValidationError) console.log(error.errors); // [{ path: "/input", message: "..." }]
 *   else if (error instanceof GenserveApiError) console.log(error.code, error.status, error.runId);
 * }
 * ```
 */
export class GenserveApiError extends Error {
  /** The stable machine code (`validation_failed`, `rate_limited`, `output_invalid`…). */
  readonly code: string;
  /** The HTTP status (0 when no answer arrived). */
  readonly status: number;
  readonly detail: string;
  /** Whether sending the same request again may succeed. */
  readonly retryable: boolean;
  /** The offending fields, by JSON Pointer. */
  readonly errors: FieldProblem[];
  /** The run the failure belongs to, when one was started. */
  readonly runId?: string;
  /** How long the server asked to wait before a retry (`Retry-After`), in milliseconds. */
  readonly retryAfterMs?: number;
  /** The whole problem body. */
  readonly problem: ProblemDetails;

  constructor(status: number, problem: ProblemDetails, options: { retryAfterMs?: number; retryable?: boolean; cause?: unknown } = {}) {
    const code = problem.code ?? `http_${status}`;
    const detail = problem.detail ?? problem.title ?? `HTTP ${status}`;
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.problem = problem;
    this.errors = problem.errors ?? [];
    this.runId = problem.runId;
    this.retryAfterMs = options.retryAfterMs;
    const known = (ERROR_CODES as Record<string, { retryable: boolean } | undefined>)[code];
    this.retryable = options.retryable ?? known?.retryable ?? status >= 500;
  }
}

/** The request was refused as malformed (`validation_failed`, and other 400/413/415/422 answers): see `errors`. */
export class GenserveValidationError extends GenserveApiError {}
/** The key is missing, unknown or not allowed this (401, 403). */
export class GenserveAuthError extends GenserveApiError {}
/** The workflow, context, thread or run does not exist for this key (404). */
export class GenserveNotFoundError extends GenserveApiError {}
/** A limit refused the request: rate, concurrency, queue (429), budget (402) or a storage quota. */
export class GenserveLimitError extends GenserveApiError {}
/** A run started and failed: the model failed or timed out, or its output never validated (`lastOutput`). */
export class GenserveRunError extends GenserveApiError {
  /** `output_invalid`: what the model last returned, which `errors` describe. */
  get lastOutput(): string | undefined {
    return typeof this.problem.lastOutput === "string" ? this.problem.lastOutput : undefined;
  }
}
/** The run was cancelled (by `cancelRun`, an abort with `cancelOnAbort`, or on the server's side). */
export class GenserveCancelledError extends GenserveApiError {}
/** No answer arrived: the network failed or the server was unreachable (`status` 0). */
export class GenserveConnectionError extends GenserveApiError {
  constructor(detail: string, cause?: unknown) {
    super(0, { code: "connection_failed", detail }, { retryable: true, cause });
  }
}
/** A callback's signature or timestamp did not verify (`verifyCallback`). */
export class GenserveSignatureError extends GenserveApiError {
  constructor(detail: string) {
    super(401, { code: "signature_invalid", detail }, { retryable: false });
  }
}

/** Milliseconds from a Retry-After header (seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterMs(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const LIMIT_CODES = new Set(["rate_limited", "model_busy", "run_queue_full", "evaluation_queue_full", "budget_exceeded", "quota_exceeded"]);

/** The error class for a problem answer. */
export function errorFromProblem(status: number, body: unknown, headers?: Headers): GenserveApiError {
  const problem: ProblemDetails = body !== null && typeof body === "object" && !Array.isArray(body) ? (body as ProblemDetails) : { detail: typeof body === "string" && body ? body.slice(0, 500) : undefined };
  const code = problem.code ?? "";
  const options = { retryAfterMs: retryAfterMs(headers?.get("retry-after")) };
  if (code === "cancelled" || status === 499) return new GenserveCancelledError(status, problem, options);
  if (LIMIT_CODES.has(code) || status === 429 || status === 402) return new GenserveLimitError(status, problem, options);
  if (status === 401 || status === 403) return new GenserveAuthError(status, problem, options);
  if (status === 404) return new GenserveNotFoundError(status, problem, options);
  if (problem.runId !== undefined || status >= 500) return new GenserveRunError(status, problem, options);
  if (status === 400 || status === 413 || status === 415 || status === 422) return new GenserveValidationError(status, problem, options);
  return new GenserveApiError(status, problem, options);
}
