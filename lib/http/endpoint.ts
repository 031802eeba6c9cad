import "server-only";
import type { z } from "zod";
import { GenserveError, type ErrorCode } from "../errors";
import { roleAtLeast } from "../domain/roles";
import { route, type RouteContext, type RouteDialect } from "./route";

export const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
export type Method = (typeof METHODS)[number];

/** A documented response: a JSON body of a named shape (`named()`), or content given as is (streams), or none (204). */
export interface ResponseSpec {
  description: string;
  /** A shape registered with `named()`: the document refers to its component. */
  body?: z.ZodType;
  /** Content other than one JSON shape (event streams, NDJSON), as the document shows it. */
  content?: Record<string, unknown>;
  headers?: Record<string, unknown>;
}

/**
 * Who may call an endpoint: anyone (`none`), or a key of at least `role` in its project (viewer <
 * editor < admin, lib/domain/roles.ts), a key below it refused with 403 `forbidden` and the entry's
 * own `refusal` (words for a viewer's or editor's key). The table's wrapper checks it before the
 * handler runs; the handler's `principal()` is the caller checked. What depends on the body (the
 * `production` label) is checked where it is decided.
 */
export type Auth = "none" | { role: "viewer" } | { role: "editor" | "admin"; refusal: string };

/** Any key of the project may call it (every role reads). */
export const VIEWER: Auth = { role: "viewer" };
/** Editors and admins: what runs models (costs money) or changes the project's workflows, contexts, suites, threads and shares. */
export const EDITOR = (refusal: string): Auth => ({ role: "editor", refusal });
/** Admins only: keys, projects, model downloads (and, in the handlers, the production label). */
export const ADMIN = (refusal: string): Auth => ({ role: "admin", refusal });

/** One operation of the API: everything the server and the OpenAPI document know about it. */
export interface Endpoint<P extends Record<string, string> = Record<string, string>> {
  method: Method;
  /** The OpenAPI path, `{name}` a parameter (`/api/v1/runs/{id}`). */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  auth: Auth;
  /** Query and header parameters as the document shows them (path parameters come from `path`). */
  parameters?: Record<string, unknown>[];
  /** The JSON request body: a named shape, or a JSON Schema given as is. */
  request?: { body: z.ZodType | Record<string, unknown>; required: boolean };
  /** Answers other than problems, by status. */
  responses: Record<string, ResponseSpec>;
  /** The problem codes it may answer with (their statuses are documented as problem+json). */
  errors: ErrorCode[];
  handler: (ctx: RouteContext<P>) => Promise<Response>;
  /**
   * For endpoints that answer another API's conventions (`openai`: OpenAI's paths under /v1, its
   * bearer key and error shape): how their requests are authenticated and errors answered, and
   * the tag that groups them in the document. Absent: genserve's own (Api-Key, problem+json).
   */
  dialect?: { route: RouteDialect; tag: string; security: string };
}

/** The OpenAPI path parameters of `path`, in order. */
export const pathParams = (path: string): string[] => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);

type ParamsOf<Path extends string> = Path extends `${string}{${infer Name}}${infer Rest}` ? { [K in Name]: string } & ParamsOf<Rest> : unknown;
type Params<Path extends string> = { [K in keyof ParamsOf<Path>]: string };

/** Declares an endpoint; its handler's `params` are typed from the path. */
export function endpoint<const Path extends string>(spec: Omit<Endpoint<Params<Path>>, "path"> & { path: Path }): Endpoint {
  return spec as unknown as Endpoint;
}

/** The Next.js-style handler of an endpoint: its auth checked first, its errors mapped to problem+json (`route`). */
export function handlerOf(entry: Endpoint): ReturnType<typeof route> {
  const { auth, handler } = entry;
  const dialect = entry.dialect?.route;
  if (auth === "none") return route(handler, dialect);
  return route(async (ctx) => {
    const caller = await ctx.principal();
    if (auth.role !== "viewer" && !roleAtLeast(caller.role, auth.role)) throw new GenserveError("forbidden", { detail: `${auth.refusal} (this key is ${caller.role === "viewer" ? "a" : "an"} ${caller.role}; this needs ${auth.role})` });
    return handler(ctx);
  }, dialect);
}
