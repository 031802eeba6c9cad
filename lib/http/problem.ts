import "server-only";
import type { Logger } from "pino";
import type { z } from "zod";
import { isGenserveError, toProblem } from "../errors";

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

/** The text of the JSON responses made here, kept beside them (see `bodyTextOf`). */
const bodyTexts = new WeakMap<Response, string>();

function textResponse(text: string, init: ResponseInit): Response {
  const response = new Response(text, init);
  bodyTexts.set(response, text);
  return response;
}

/**
 * The whole body of a JSON response made by `json`, `reply` or `problemResponse`, while it is still
 * unread: the API's server writes it to the connection as it is, without reading the response's
 * web stream (lib/cli/api-routes.ts). Undefined for any other response.
 */
export function bodyTextOf(response: Response): string | undefined {
  return response.bodyUsed ? undefined : bodyTexts.get(response);
}

/** An error as a problem+json response (the mapping itself is `toProblem`, in lib/errors.ts). */
export function problemResponse(error: unknown, log?: Logger): Response {
  const problem = toProblem(error, log);
  const headers = new Headers({ "Content-Type": PROBLEM_CONTENT_TYPE, "Cache-Control": "no-store" });
  if (isGenserveError(error)) for (const [k, v] of Object.entries(error.headers ?? {})) headers.set(k, v);
  if (problem.runId) headers.set("X-Run-ID", problem.runId);
  return textResponse(JSON.stringify(problem), { status: problem.status, headers });
}

export function json(body: unknown, init: { status?: number; headers?: Record<string, string> } = {}): Response {
  return textResponse(JSON.stringify(body), {
    status: init.status ?? 200,
    headers: { "Content-Type": "application/json", "Cache-Control": "no-store", ...init.headers },
  });
}

/**
 * A JSON response whose body is checked, at compile time, against the public shape it is
 * documented with (lib/api/responses.ts, from which the OpenAPI document is generated). The shape
 * costs nothing at run time; a test validates real responses against the published document.
 */
export function reply<T extends z.ZodType>(_shape: T, body: z.input<T>, init: { status?: number; headers?: Record<string, string> } = {}): Response {
  return json(body, init);
}
