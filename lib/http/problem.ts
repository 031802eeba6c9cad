import "server-only";
import type { Logger } from "pino";
import type { z } from "zod";
import { isGenserveError, toProblem } from "../errors";
import { writableDirectly } from "./direct";

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

/** A JSON response, which the API's server writes as its text (`writableDirectly`). */
function textResponse(text: string, init: ResponseInit): Response {
  return writableDirectly(new Response(text, init), (res, status, headers) =>
    res.writeHead(status, { ...headers, "content-length": String(Buffer.byteLength(text)) }).end(text),
  );
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
