/**
 * A route handler that forwards the browser's genserve calls to genserve with the server's key,
 * so the key never reaches the browser: the client side calls your app (`baseURL: "/api/genserve"`,
 * no key), this adds `Api-Key` and passes the answer through — streams included, as they arrive.
 * Only the run operations are forwarded (generate, stream, a run, its stream and its cancel).
 * Runs wherever `fetch` and `Request`/`Response` exist (Next.js, Node or edge). Browser-safe.
 */

export interface ProxyOptions {
  /** genserve's address, e.g. `http://genserve.internal:3000`. */
  baseURL: string;
  /** The key the app runs under (keep it in server-side configuration). */
  apiKey: string;
  /** Decides per request whether to forward it (authenticate your users here). */
  authorize?: (request: Request) => boolean | Promise<boolean>;
  fetch?: typeof fetch;
}

const FORWARDED_PATHS = [
  /^\/api\/v1\/generate\/(object|text)$/,
  /^\/api\/v1\/stream\/object$/,
  /^\/api\/v1\/runs\/[A-Za-z0-9_-]+(\/stream|\/cancel)?$/,
];
const REQUEST_HEADERS = ["accept", "content-type", "last-event-id", "prefer", "idempotency-key", "traceparent"];
const RESPONSE_HEADERS = ["content-type", "cache-control", "x-run-id", "retry-after", "location", "preference-applied", "idempotent-replayed"];

const problem = (status: number, code: string, detail: string) =>
  new Response(JSON.stringify({ type: "about:blank", title: detail, status, detail, code }), { status, headers: { "Content-Type": "application/problem+json" } });

/**
 * Makes the handler. Mount it on a catch-all route; the part of the path from `/api/v1/` on is
 * forwarded.
 *
 * @example
 * ```ts
 * // app/api/genserve/[...path]/route.ts
 * import { genserveProxy } from "genserve/react";
 * export const { GET, POST } = genserveProxy({ baseURL: process.env.GENSERVE_URL!, apiKey: process.env.GENSERVE_KEY! });
 *
 * // in a client component
 * const { submit, object } = useObjectStream({ baseURL: "/api/genserve", workflow: "extract-invoice", schema });
 * ```
 */
export function genserveProxy(options: ProxyOptions): { GET: (request: Request) => Promise<Response>; POST: (request: Request) => Promise<Response> } {
  const base = options.baseURL.replace(/\/+$/, "");
  const fetcher = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));
  async function forward(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const at = url.pathname.indexOf("/api/v1/");
    const path = at === -1 ? "" : url.pathname.slice(at);
    if (!FORWARDED_PATHS.some((allowed) => allowed.test(path))) return problem(404, "not_found", "This path is not forwarded to genserve.");
    if (options.authorize && !(await options.authorize(request))) return problem(401, "unauthorized", "Not signed in.");
    const headers: Record<string, string> = { "Api-Key": options.apiKey };
    for (const name of REQUEST_HEADERS) {
      const value = request.headers.get(name);
      if (value !== null) headers[name] = value;
    }
    const upstream = await fetcher(`${base}${path}${url.search}`, {
      method: request.method,
      headers,
      body: request.method === "GET" ? undefined : await request.text(),
      signal: request.signal,
    });
    const out = new Headers();
    for (const name of RESPONSE_HEADERS) {
      const value = upstream.headers.get(name);
      if (value !== null) out.set(name, value);
    }
    return new Response(upstream.body, { status: upstream.status, headers: out });
  }
  return { GET: forward, POST: forward };
}
