import "server-only";
import type { z } from "zod";
import { GenserveError } from "../errors";
import { authenticate, type Principal } from "../keys/keys";
import { getRuntime, type Runtime } from "../server/runtime";
import { parseWith, readJsonBody } from "./body";
import { problemResponse } from "./problem";

export interface RouteContext<P> {
  request: Request;
  runtime: Runtime;
  params: P;
  /** The caller's key from the Api-Key header, or a 401. */
  principal(): Promise<Principal>;
  /** The caller of a run operation: authenticated, then charged against the key's rate limit (429). */
  runCaller(): Promise<Principal>;
  /** The JSON body, read within the size limit and validated against a request shape (and the caller's JSON Schema, if it has one). */
  body<T extends z.ZodType>(schema: T): Promise<z.infer<T>>;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * Wraps a route handler: builds its context and turns any error into problem+json — the only
 * error mapping the API has.
 */
export function route<P extends Record<string, string> = Record<string, never>>(handler: (ctx: RouteContext<P>) => Promise<Response>) {
  return async function handle(request: Request, segment: { params: Promise<P> }): Promise<Response> {
    let runtime: Runtime | undefined;
    try {
      runtime = getRuntime();
      const rt = runtime;
      let principal: Promise<Principal> | undefined;
      return await handler({
        request,
        runtime: rt,
        params: (await segment?.params) ?? ({} as P),
        principal: () => (principal ??= authenticate(rt.store, request.headers.get("api-key"))),
        runCaller: async () => {
          const caller = await (principal ??= authenticate(rt.store, request.headers.get("api-key")));
          rt.rateLimiter.take(caller.keyId);
          return caller;
        },
        body: async (shape) => {
          const raw = await readJsonBody(request, rt.config.limits.bodyBytes, rt.config.limits.jsonDepth);
          const schema = isObject(raw) ? raw.schema : undefined;
          return parseWith(shape, raw, isObject(schema) ? await rt.schemas.problems(schema) : []);
        },
      });
    } catch (error) {
      return problemResponse(error, runtime?.logger);
    }
  };
}

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
type Method = (typeof METHODS)[number];

/**
 * Handlers for the methods a route does not implement, answering 405 problem+json with `Allow`
 * (Next.js's own 405 has an empty body). A route file exports the ones it lacks:
 * `export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST")`.
 */
export function otherMethods(...allowed: Method[]): Record<Method, ReturnType<typeof route>> {
  const allow = [...allowed, ...(allowed.includes("GET") ? ["HEAD"] : []), "OPTIONS"].join(", ");
  const handler = route(async ({ request }) => {
    throw new GenserveError("method_not_allowed", { detail: `${request.method} is not allowed on ${new URL(request.url).pathname}; use ${allowed.join(" or ")}.`, headers: { Allow: allow } });
  });
  return Object.fromEntries(METHODS.map((m) => [m, handler])) as Record<Method, ReturnType<typeof route>>;
}
