/**
 * The bottom layer: every module may import it, it imports nothing of genserve's.
 *
 * The one error base of genserve. Every failure a caller can see is a GenserveError with a stable
 * machine `code`, an HTTP `status` and whether retrying the same request may succeed. `toProblem`
 * is the one place an error becomes an RFC 9457 problem body (the HTTP layer only serialises it).
 * Browser-safe: the playground reads the same codes.
 */
import type { ZodError } from "zod";
import { toPointer } from "./json/pointer";

/** Where unknown errors are reported (a pino logger fits). */
export interface ErrorLog {
  error(fields: Record<string, unknown>, message: string): void;
}

export const ERROR_CODES = {
  validation_failed: { status: 400, title: "Request validation failed", retryable: false },
  unauthorized: { status: 401, title: "Missing or unknown API key", retryable: false },
  budget_exceeded: { status: 402, title: "The key's budget is spent", retryable: false },
  forbidden: { status: 403, title: "Not allowed for this API key", retryable: false },
  csrf_refused: { status: 403, title: "A change sent with a session cookie needs this site's origin and the session's CSRF token", retryable: false },
  sign_in_failed: { status: 400, title: "The sign-in could not be completed", retryable: false },
  not_found: { status: 404, title: "Not found", retryable: false },
  workflow_not_found: { status: 404, title: "Workflow not found", retryable: false },
  context_not_found: { status: 404, title: "Context not found", retryable: false },
  thread_not_found: { status: 404, title: "Thread not found", retryable: false },
  run_not_found: { status: 404, title: "Run not found", retryable: false },
  suite_not_found: { status: 404, title: "Suite not found", retryable: false },
  evaluation_not_found: { status: 404, title: "Evaluation not found", retryable: false },
  share_not_found: { status: 404, title: "Share link not found", retryable: false },
  conflict: { status: 409, title: "Conflict", retryable: false },
  quota_exceeded: { status: 409, title: "The key holds as many of these as it may", retryable: false },
  thread_full: { status: 409, title: "The thread is full", retryable: false },
  idempotency_in_progress: { status: 409, title: "A request with this Idempotency-Key is still in progress", retryable: true },
  idempotency_mismatch: { status: 422, title: "This Idempotency-Key was used with a different request", retryable: false },
  method_not_allowed: { status: 405, title: "Method not allowed", retryable: false },
  schema_timeout: { status: 422, title: "Validating against the schema took too long", retryable: false },
  attachment_fetch_refused: { status: 400, title: "An attachment URL may not be fetched", retryable: false },
  attachment_unreadable: { status: 422, title: "The attachment cannot be read", retryable: false },
  attachment_unsupported: { status: 422, title: "The attachment cannot be used with this model", retryable: false },
  attachment_fetch_failed: { status: 502, title: "An attachment URL could not be fetched", retryable: true },
  payload_too_large: { status: 413, title: "Payload too large", retryable: false },
  unsupported_media_type: { status: 415, title: "Unsupported media type", retryable: false },
  stream_unavailable: { status: 409, title: "The run's stream is not available here", retryable: false },
  run_finished: { status: 409, title: "The run has already finished", retryable: false },
  cancelled: { status: 499, title: "The client cancelled the run", retryable: false },
  rate_limited: { status: 429, title: "Too many requests", retryable: true },
  model_busy: { status: 429, title: "The local model is busy: too many runs are waiting for it", retryable: true },
  evaluation_queue_full: { status: 429, title: "Too many evaluations are queued for this key", retryable: true },
  run_queue_full: { status: 429, title: "Too many asynchronous runs are queued for this key", retryable: true },
  internal: { status: 500, title: "Internal error", retryable: true },
  model_error: { status: 502, title: "The model provider failed", retryable: true },
  output_invalid: { status: 502, title: "The model did not produce valid output", retryable: true },
  service_unavailable: { status: 503, title: "Service unavailable", retryable: true },
  storage_unavailable: { status: 503, title: "The database is not reachable", retryable: true },
  storage_full: { status: 503, title: "The data store cannot take writes right now (disk full)", retryable: true },
  model_unavailable: { status: 503, title: "The model is not available", retryable: true },
  interrupted: { status: 503, title: "The run was interrupted by a server stop", retryable: true },
  model_timeout: { status: 504, title: "The model timed out", retryable: true },
} as const satisfies Record<string, { status: number; title: string; retryable: boolean }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** One offending field: `path` is a JSON Pointer into the request body (e.g. `/callback/url`). */
export interface FieldError {
  path: string;
  message: string;
}

export interface GenserveErrorOptions {
  detail?: string;
  errors?: FieldError[];
  runId?: string;
  retryable?: boolean;
  headers?: Record<string, string>;
  cause?: unknown;
  /** For `model_error`: the provider's HTTP status, when it answered. */
  upstreamStatus?: number;
  /** For retryable errors: how long the other side asked us to wait (Retry-After). */
  retryAfterMs?: number;
  /** Extension members of the problem body (RFC 9457 §3.2): which limit or budget refused a run. */
  extensions?: ProblemExtensions;
}

/** The problem members beyond RFC 9457's that a client can act on. */
export interface ProblemExtensions {
  /** `budget_exceeded`: the budget, and when it resets. */
  budget?: { period: "daily" | "monthly"; limitUsd: string; spentUsd: string; reservedUsd: string; resetsAt: string };
  /** `rate_limited` by a key's limit: which policy, its quota, and when to retry. */
  limit?: { policy: "rpm" | "tpm" | "concurrency"; quota: number; retryAfterSeconds: number };
  /** `output_invalid`: the model's last output as it was generated (its first 32 KiB), which `errors` describe; `cancelled`: the streamed output so far. */
  lastOutput?: string;
  /** `quota_exceeded`: what the key holds as many of as it may (`limits.<resource>PerKey`). */
  quota?: { resource: QuotaResource; limit: number; used: number };
}

/** What a key's storage quotas count. */
export type QuotaResource = "inboxes" | "shares" | "threads" | "suites";

// A registered symbol, not `instanceof`: the CLI (tsx) and the Next.js bundle load separate copies
// of this module in one process, and an error made by one copy must be recognised by the other.
const BRAND = Symbol.for("genserve.error");

export class GenserveError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly title: string;
  readonly retryable: boolean;
  readonly detail: string;
  readonly errors?: FieldError[];
  runId?: string;
  readonly headers?: Record<string, string>;
  readonly upstreamStatus?: number;
  readonly retryAfterMs?: number;
  readonly extensions?: ProblemExtensions;

  constructor(code: ErrorCode, options: GenserveErrorOptions = {}) {
    const spec = ERROR_CODES[code];
    super(options.detail ?? spec.title, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "GenserveError";
    this.code = code;
    this.status = spec.status;
    this.title = spec.title;
    this.retryable = options.retryable ?? spec.retryable;
    this.detail = options.detail ?? spec.title;
    this.errors = options.errors;
    this.runId = options.runId;
    this.headers = options.headers;
    this.upstreamStatus = options.upstreamStatus;
    this.retryAfterMs = options.retryAfterMs;
    this.extensions = options.extensions;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

export function isGenserveError(value: unknown): value is GenserveError {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/** A 400 naming every offending field. */
export function validationError(errors: FieldError[], detail?: string): GenserveError {
  const summary = detail ?? (errors.length === 1 ? `${errors[0]!.path || "body"}: ${errors[0]!.message}` : `${errors.length} fields are invalid`);
  return new GenserveError("validation_failed", { detail: summary, errors });
}

/** Each path and message once, in first-seen order. */
export function dedupeFieldErrors(errors: readonly FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const key = `${e.path}\u0000${e.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A zod error as field errors, each named by its JSON Pointer. */
export function zodFieldErrors(error: ZodError): FieldError[] {
  const errors: FieldError[] = [];
  for (const issue of error.issues) {
    const path = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) errors.push({ path: toPointer([...path, key]), message: "is not a known field" });
    } else if (issue.code === "invalid_type" && issue.input === undefined) {
      // Absent. (Parse with `reportInput: true`: without it zod leaves `input` out of every issue,
      // and a value of the wrong type would read as absent.)
      errors.push({ path: toPointer(path), message: "is required" });
    } else {
      errors.push({ path: toPointer(path), message: issue.message });
    }
  }
  return errors;
}

/** An RFC 9457 problem body as genserve sends it (responses, stream error events, runs, callbacks). */
export interface ProblemBody extends ProblemExtensions {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  runId?: string;
  errors?: FieldError[];
}

/**
 * The one place an error becomes a problem body. Anything that is not a GenserveError is an
 * internal error: reported to `log` (name and message, no stack) and described generically.
 */
export function toProblem(error: unknown, log?: ErrorLog): ProblemBody {
  const known: GenserveError = isGenserveError(error) ? error : new GenserveError("internal", { detail: "An internal error occurred." });
  if (!isGenserveError(error)) {
    log?.error({ err: { name: (error as Error)?.name, message: (error as Error)?.message } }, "internal error");
  }
  return {
    type: `/docs#error-${known.code}`,
    title: known.title,
    status: known.status,
    detail: known.detail,
    code: known.code,
    ...(known.runId !== undefined && { runId: known.runId }),
    ...(known.errors !== undefined && { errors: known.errors }),
    ...known.extensions,
  };
}
