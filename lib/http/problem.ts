import type { Logger } from "pino";
import { GenserveError, isGenserveError } from "../errors";
import type { ProblemBody } from "../store/types";

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

/**
 * The one place an error becomes an RFC 9457 problem body. Anything that is not a GenserveError is
 * an internal error: logged (name and message, no stack) and answered with a generic 500.
 */
export function toProblem(error: unknown, log?: Logger): ProblemBody {
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
  };
}

export function problemResponse(error: unknown, log?: Logger): Response {
  const problem = toProblem(error, log);
  const headers = new Headers({ "Content-Type": PROBLEM_CONTENT_TYPE, "Cache-Control": "no-store" });
  if (isGenserveError(error)) for (const [k, v] of Object.entries(error.headers ?? {})) headers.set(k, v);
  if (problem.runId) headers.set("X-Run-ID", problem.runId);
  return new Response(JSON.stringify(problem), { status: problem.status, headers });
}

export function json(body: unknown, init: { status?: number; headers?: Record<string, string> } = {}): Response {
  return new Response(JSON.stringify(body), {
    status: init.status ?? 200,
    headers: { "Content-Type": "application/json", "Cache-Control": "no-store", ...init.headers },
  });
}
