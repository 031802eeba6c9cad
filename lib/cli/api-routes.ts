import "server-only";
import { readdirSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { getRequestListener } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { GenserveError } from "../errors";
import { directWriterOf } from "../http/direct";
import { problemResponse } from "../http/problem";
import { peekRuntime } from "../server/runtime";

/**
 * The API's route handlers served straight from `node:http`, without Next.js's request pipeline.
 *
 * The handlers are the same files Next.js serves (`app/**\/route.ts`, thin), found the way Next.js
 * finds them — by the file system, `[name]` a parameter, `[...name]` the rest of the path — and
 * called with a web `Request` as Next.js calls them. Next.js's routing, rendering and response
 * plumbing cost about 1.6 ms of CPU per request on the reference machine (docs/benchmarks.md): more
 * than the whole of a stateless gateway. Pages and their assets still go through Next.js; in
 * development (`--dev`) everything does, so that route files reload.
 *
 * The route modules load under tsx in the CLI's copy of `lib/`; the runtime they use is the one
 * process-wide object (lib/server/runtime.ts), whichever copy created it.
 */

type Handler = (request: Request, segment: { params: Promise<Record<string, string | string[]>> }) => Response | Promise<Response>;
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
type RouteModule = Partial<Record<(typeof METHODS)[number], Handler>>;

interface Route {
  /** Static segments match themselves; `:name` one segment; `*name` the rest (one or more). */
  segments: string[];
  module: RouteModule;
  file: string;
  /** The Allow header of this route: the methods its module exports, HEAD with GET, and OPTIONS. */
  allow: string;
}

export interface ApiRoutes {
  /** Whether this server answers `pathname` itself (else Next.js does). */
  handles(pathname: string): boolean;
  /** The node:http listener for the requests it handles. */
  listener: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  readonly count: number;
}

/** Route files under `appDir` (Next.js's `app/`), as patterns; route groups `(name)` are not part of the path. */
export function findRouteFiles(appDir: string): { file: string; segments: string[] }[] {
  const found: { file: string; segments: string[] }[] = [];
  const walk = (dir: string, segments: string[]) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        const name = entry.name;
        if (name.startsWith("_") || name.startsWith("@")) continue; // private folders and parallel slots are not routes
        const catchAll = /^\[\.\.\.(\w+)\]$/.exec(name);
        const param = /^\[(\w+)\]$/.exec(name);
        const segment = /^\(.*\)$/.test(name) ? null : catchAll ? `*${catchAll[1]}` : param ? `:${param[1]}` : name;
        walk(path.join(dir, name), segment === null ? segments : [...segments, segment]);
      } else if (entry.name === "route.ts") {
        found.push({ file: path.join(dir, entry.name), segments });
      }
    }
  };
  walk(appDir, []);
  return found;
}

/** Next.js's precedence: a static segment before a parameter before a catch-all, at the first segment where routes differ. */
export function compareRoutes(a: { segments: string[] }, b: { segments: string[] }): number {
  const rank = (s: string | undefined) => (s === undefined ? 3 : s.startsWith("*") ? 2 : s.startsWith(":") ? 1 : 0);
  for (let i = 0; i < Math.max(a.segments.length, b.segments.length); i++) {
    const d = rank(a.segments[i]) - rank(b.segments[i]);
    if (d !== 0) return d;
  }
  return 0;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The first route (in precedence order) matching a path, with its parameters; null when none does or the path ends in a slash (Next.js redirects those). */
export function matchRoute<R extends { segments: string[] }>(routes: R[], pathname: string): { route: R; params: Record<string, string | string[]> } | null {
  if (pathname.length > 1 && pathname.endsWith("/")) return null;
  const parts = pathname.split("/").slice(1);
  for (const route of routes) {
    const params = matchSegments(route.segments, parts);
    if (params) return { route, params };
  }
  return null;
}

/** The parameters of one route's segments against a path's parts, or null when they do not match. */
function matchSegments(segments: string[], parts: string[]): Record<string, string | string[]> | null {
  const params: Record<string, string | string[]> = {};
  for (const [i, s] of segments.entries()) {
    if (s.startsWith("*")) {
      // A catch-all takes the rest of the path: one segment or more.
      if (i >= parts.length) return null;
      params[s.slice(1)] = parts.slice(i).map(decode);
      return params;
    }
    const part = parts[i];
    if (part === undefined || part === "") return null;
    if (s.startsWith(":")) params[s.slice(1)] = decode(part);
    else if (s !== part) return null;
  }
  return parts.length === segments.length ? params : null;
}

/**
 * Loads every route handler under `appDir` whose path is one of `prefixes` or below one (`/api`,
 * `/healthz`, …) and returns the listener serving them. `headers` are set on every response (the
 * security headers next.config.ts gives Next.js's own).
 */
export async function loadApiRoutes(appDir: string, options: { prefixes: string[]; headers: { key: string; value: string }[] }): Promise<ApiRoutes> {
  const inScope = (pathname: string) => options.prefixes.some((prefix) => pathname === prefix || pathname.startsWith(`${prefix}/`));
  const routes: Route[] = [];
  for (const { file, segments } of findRouteFiles(appDir)) {
    if (!inScope(`/${segments.join("/")}`)) continue;
    const module = (await import(pathToFileURL(file).href)) as RouteModule;
    const methods = METHODS.filter((m) => m !== "OPTIONS" && module[m]);
    routes.push({ file, segments, module, allow: [...methods, ...(module.GET ? ["HEAD"] : []), "OPTIONS"].join(", ") });
  }
  routes.sort(compareRoutes);

  const dispatch = async (request: Request): Promise<Response> => {
    const { pathname } = new URL(request.url);
    const found = matchRoute(routes, pathname);
    if (!found) return problemResponse(new GenserveError("not_found", { detail: `${request.method} ${pathname} is not an operation of this API.` }));
    const { module, allow } = found.route;
    const method = request.method.toUpperCase();
    const segment = { params: Promise.resolve(found.params) };
    if (method === "HEAD" && module.GET) {
      const response = await module.GET(request, segment);
      await response.body?.cancel();
      return new Response(null, { status: response.status, headers: response.headers });
    }
    if (method === "OPTIONS" && !module.OPTIONS) return new Response(null, { status: 204, headers: { Allow: allow } });
    const handler = module[method as (typeof METHODS)[number]];
    if (!handler) return problemResponse(new GenserveError("method_not_allowed", { detail: `${method} is not allowed on ${pathname}.`, headers: { Allow: allow } }));
    return handler(request, segment);
  };

  const listen = getRequestListener(
    async (request, env) => {
      let response: Response;
      try {
        response = await dispatch(request);
      } catch (error) {
        // Route handlers map their errors themselves (lib/http/route.ts); this is for one that threw anyway.
        response = problemResponse(error, peekRuntime()?.logger);
      }
      // A JSON body is written as its text, and a run's stream event by event, instead of read back
      // from the response's web stream (Set-Cookie, never on these, would not survive the headers
      // as a record).
      const writeDirectly = directWriterOf(response);
      if (!writeDirectly || response.headers.has("set-cookie")) return response;
      const headers: Record<string, string> = {};
      response.headers.forEach((value, name) => (headers[name] = value));
      writeDirectly(env.outgoing as ServerResponse, response.status, headers);
      return RESPONSE_ALREADY_SENT;
    },
    // Keep the process's own Request and Response: Next.js serves the pages in this process too.
    { overrideGlobalObjects: false },
  );
  return {
    count: routes.length,
    // A path with a trailing slash is left to Next.js, which redirects it.
    handles: (pathname) => inScope(pathname) && !pathname.endsWith("/"),
    listener: (req, res) => {
      for (const { key, value } of options.headers) res.setHeader(key, value);
      // The client's address (x-genserve-peer) was set by serve.ts for every request (client-address.ts).
      return listen(req, res);
    },
  };
}
