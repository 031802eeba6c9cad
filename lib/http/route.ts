import "server-only";
import type { z } from "zod";
import { GenserveError } from "../errors";
import type { Principal } from "../keys/api-keys";
import type { ResolvedSession } from "../people/sessions";
import { rateLimitHeaders } from "../keys/limit-meters";
import type { MeterState } from "../store/store-types";
import { getRuntime, type Runtime } from "../server/runtime";
import { parseWith, readJsonBody } from "./body";
import { callerOf } from "./caller";
import { problemResponse } from "./problem";

export interface RouteContext<P> {
  request: Request;
  runtime: Runtime;
  params: P;
  /** The caller: the key of the Api-Key header, or the session cookie's (changes checked against CSRF); else a 401. */
  principal(): Promise<Principal>;
  /** After `principal()`: the session it came from, when the caller is a signed-in browser. */
  session(): ResolvedSession | null;
  /** The JSON body, read within the size limit and validated against a request shape (and the caller's JSON Schema, if it has one). */
  /**
   * The request body shaped by `schema`; a `schema` field in it (a caller's JSON Schema) is screened
   * and compiled too, its problems refused with the body's, unless `callerSchema` is "as data".
   */
  body<T extends z.ZodType>(schema: T, options?: { callerSchema?: "checked" | "as data"; optional?: boolean }): Promise<z.infer<T>>;
}

/** The IETF RateLimit fields of a run's response, from the key's meters as its admission left them. */
export function quotaHeaders(quota: readonly MeterState[]): Record<string, string> {
  return rateLimitHeaders(quota, new Date());
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

/** How a family of routes differs from the API's own: where the key is, and the shape of errors. */
export interface RouteDialect {
  /** The key the request presents (the API's: the Api-Key header). */
  credential(request: Request): string | null;
  /** An error as a response (the API's: problem+json). */
  errorResponse(error: unknown, log?: Runtime["logger"]): Response;
}

const API_DIALECT: RouteDialect = { credential: (request) => request.headers.get("api-key"), errorResponse: problemResponse };

/**
 * Wraps a route handler: builds its context and turns any error into problem+json — the only
 * error mapping the API has (the OpenAI-compatible routes, `dialect`, answer OpenAI's error shape
 * from the same errors).
 */
export function route<P extends Record<string, string> = Record<string, never>>(handler: (ctx: RouteContext<P>) => Promise<Response>, dialect: RouteDialect = API_DIALECT) {
  return async function handle(request: Request, segment: { params: Promise<P> }): Promise<Response> {
    const started = performance.now();
    let runtime: Runtime | undefined;
    let params = {} as P;
    let response: Response;
    try {
      runtime = getRuntime();
      const rt = runtime;
      let principal: Promise<Principal> | undefined;
      let session: ResolvedSession | null = null;
      params = (await segment?.params) ?? ({} as P);
      response = await handler({
        request,
        runtime: rt,
        params,
        // The OpenAI-compatible routes take their key as a bearer token, and no session cookie.
        principal: () => (principal ??= callerOf(rt, request, dialect.credential(request), dialect === API_DIALECT, (resolved) => (session = resolved))),
        session: () => session,
        body: async (shape, options) => {
          // An optional body may be left out entirely (no Content-Type, nothing sent): it is `{}` then.
          const absent = options?.optional && !request.headers.get("content-type") && (request.headers.get("content-length") ?? "0") === "0" && !request.headers.get("transfer-encoding");
          const raw = absent ? {} : await readJsonBody(request, rt.config.limits.bodyBytes, rt.config.limits.jsonDepth);
          const schema = isObject(raw) && options?.callerSchema !== "as data" ? raw.schema : undefined;
          return parseWith(shape, raw, isObject(schema) ? await rt.schemas.problems(schema) : []);
        },
      });
    } catch (error) {
      response = dialect.errorResponse(error, runtime?.logger);
    }
    runtime?.metrics.httpRequest(routePattern(new URL(request.url).pathname, params), request.method, response.status, (performance.now() - started) / 1000);
    return response;
  };
}

/**
 * The route a request matched, as a bounded metrics label: each path parameter's value is put back
 * as its name (`/api/v1/runs/run_01…/stream` → `/api/v1/runs/[id]/stream`).
 */
export function routePattern(pathname: string, params: Record<string, string | string[]>): string {
  const decode = (segment: string) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      return segment;
    }
  };
  const segments = pathname.split("/").map(decode);
  for (const [name, value] of Object.entries(params)) {
    if (Array.isArray(value)) {
      // A catch-all: its segments are the path's last ones.
      if (value.length > 0) segments.splice(segments.length - value.length, value.length, `[...${name}]`);
    } else {
      const i = segments.lastIndexOf(value);
      if (i > 0) segments[i] = `[${name}]`;
    }
  }
  return segments.join("/");
}

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
type Method = (typeof METHODS)[number];

/**
 * Handlers for the methods a route does not implement, answering 405 problem+json with `Allow`
 * (Next.js's own 405 has an empty body). A route file exports the ones it lacks:
 * `export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST")`.
 */
export function otherMethods(...allowed: Method[]): Record<Method, ReturnType<typeof route>> {
  return otherMethodsIn(API_DIALECT, allowed);
}

/** As `otherMethods`, answering in a dialect's error shape. */
export function otherMethodsIn(dialect: RouteDialect, allowed: Method[]): Record<Method, ReturnType<typeof route>> {
  const allow = [...allowed, ...(allowed.includes("GET") ? ["HEAD"] : []), "OPTIONS"].join(", ");
  const handler = route(async ({ request }) => {
    throw new GenserveError("method_not_allowed", { detail: `${request.method} is not allowed on ${new URL(request.url).pathname}; use ${allowed.join(" or ")}.`, headers: { Allow: allow } });
  }, dialect);
  return Object.fromEntries(METHODS.map((m) => [m, handler])) as Record<Method, ReturnType<typeof route>>;
}
