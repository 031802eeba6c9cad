import "server-only";
import type http from "node:http";
import { Readable } from "node:stream";
import { keptAliveAgent, sendReplacingStale } from "./kept-alive";
/**
 * The most any response body may be, read whole (JSON) or handed over as it arrives (anything
 * else): past it the exchange is cut and the call fails. A provider's answer is a few MB at most;
 * a body that goes on (a server sending garbage, or a 200 of hundreds of MB) must not fill memory.
 */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
/**
 * The longest line an event stream or NDJSON body may have: a parser holds a line whole until it
 * ends, so one that never ends is memory that grows until the body's bound.
 */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;

/** The name of the error (a `cause` of fetch's TypeError) for a body past its bounds. */
export const RESPONSE_TOO_LARGE = "ResponseTooLargeError";

function tooLarge(what: string): TypeError {
  const cause = new Error(what);
  cause.name = RESPONSE_TOO_LARGE;
  return new TypeError("fetch failed", { cause });
}
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * A `fetch` for calling model providers, on `node:http` with kept-alive connections.
 *
 * Node's own `fetch` (undici) costs about twice the CPU per call of a `node:http` request on the
 * reference machine (docs/benchmarks.md): it builds a WHATWG Request, a body stream for the request
 * and another for the response, and abort-signal plumbing, for each call. The providers of the AI SDK
 * post a JSON text and read the answer whole, or as an event stream, which is all this does:
 *
 * - a request with a text or byte body (or none) to an http(s) URL; anything else (a `Request`
 *   object, form data, a redirect in the answer) is handed to `fallback`, as is;
 * - the answer as a `Response`: a JSON document (`application/json`, what providers answer a call
 *   that does not stream with) read whole first, any other body (an event stream, Ollama's NDJSON,
 *   text) handed over as it arrives; every body is bounded (`MAX_BODY_BYTES`), and so is each line
 *   of an event stream or NDJSON (`MAX_LINE_BYTES`): past them the exchange is cut and the body
 *   fails with a `TypeError` whose cause is named `ResponseTooLargeError`;
 * - the caller's `signal` aborts the exchange at any point, rejecting with the signal's reason as
 *   `fetch` does; a failure to connect or a broken exchange rejects with `TypeError("fetch failed")`
 *   and the system error as its `cause`, as `fetch` does, so callers' error handling is unchanged;
 * - a kept-alive connection that the server closed just as it was reused is replaced by a new
 *   one, once (`sendReplacingStale`).
 */
export function createHttpFetch(options: { fallback: typeof fetch }): typeof fetch {
  const agents = { "http:": keptAliveAgent("http:"), "https:": keptAliveAgent("https:") };
  const fallback = options.fallback;

  return async function httpFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
    const body = init.body;
    const simpleBody = body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array;
    if (input instanceof Request || !simpleBody || (init.redirect !== undefined && init.redirect !== "follow")) return fallback(input, init);
    const url = new URL(input);
    if (url.protocol !== "http:" && url.protocol !== "https:") return fallback(input, init);
    const signal = init.signal ?? undefined;
    signal?.throwIfAborted();

    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => (headers[name] = value));
    const payload = body === undefined || body === null ? undefined : typeof body === "string" ? Buffer.from(body) : body;
    if (payload !== undefined) headers["content-length"] = String(payload.byteLength);

    const answer = await exchange(url, { method: init.method ?? "GET", headers, payload, agent: agents[url.protocol], signal });
    if (answer === "redirected") return fallback(input, init);
    return answer;
  };
}

interface Exchange {
  method: string;
  headers: Record<string, string>;
  payload: Uint8Array | undefined;
  agent: http.Agent;
  signal: AbortSignal | undefined;
}

/** One request and its answer (read whole, or an event stream as it comes). */
function exchange(url: URL, x: Exchange): Promise<Response | "redirected"> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let inFlight: { destroy(): void } | undefined;
    let stream: Readable | undefined;
    const onAbort = () => {
      const reason = x.signal!.reason as unknown;
      inFlight?.destroy();
      stream?.destroy(reason instanceof Error ? reason : new Error(String(reason)));
      fail(reason);
    };
    const cleanUp = () => x.signal?.removeEventListener("abort", onAbort);
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      cleanUp();
      reject(error);
    };
    const succeed = (response: Response | "redirected") => {
      settled = true;
      resolve(response);
    };

    const onResponse = (incoming: http.IncomingMessage) => {
      const status = incoming.statusCode ?? 0;
      if (REDIRECTS.has(status) && incoming.headers.location) {
        incoming.resume();
        cleanUp();
        return succeed("redirected");
      }
      const headers = responseHeaders(incoming);
      const init = { status, statusText: incoming.statusMessage ?? "", headers };
      const empty = x.method === "HEAD" || status === 204 || status === 304;
      if (empty) {
        incoming.resume();
        cleanUp();
        return succeed(new Response(null, init));
      }
      if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(incoming.headers["content-type"] ?? "")) {
        // Anything but a JSON document (an event stream, NDJSON, text) is handed over as it
        // arrives; the abort listener stays until the stream ends.
        stream = incoming;
        incoming.once("close", cleanUp);
        const body = Readable.toWeb(incoming) as ReadableStream<Uint8Array>;
        bound(incoming, /^(?:text\/event-stream|application\/(?:x-)?ndjson|application\/jsonl)\s*(?:;|$)/i.test(incoming.headers["content-type"] ?? ""));
        return succeed(new Response(body, init));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      incoming.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          incoming.destroy();
          fail(tooLarge(`the response body is larger than ${MAX_BODY_BYTES} bytes`));
        } else chunks.push(chunk);
      });
      incoming.on("end", () => {
        if (settled) return;
        cleanUp();
        succeed(new Response((chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)) as Uint8Array<ArrayBuffer>, init));
      });
      incoming.on("error", (error) => fail(new TypeError("fetch failed", { cause: error })));
      incoming.on("close", () => {
        if (!incoming.complete) fail(new TypeError("fetch failed", { cause: new Error("the connection closed before the response ended") }));
      });
    };

    try {
      inFlight = sendReplacingStale(url, { method: x.method, headers: x.headers, body: x.payload, agent: x.agent }, { onResponse, onError: (error) => fail(new TypeError("fetch failed", { cause: error })) });
    } catch (error) {
      // Refused before anything was sent (a header value Node will not write, say).
      return fail(new TypeError("fetch failed", { cause: error }));
    }
    x.signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Cuts a body handed over as it arrives once it passes `MAX_BODY_BYTES`, or, for a body of lines
 * (an event stream, NDJSON), once one line passes `MAX_LINE_BYTES`. It only counts: the chunks
 * still go to the body's reader, which keeps its backpressure (pausing the stream pauses this too).
 */
function bound(incoming: http.IncomingMessage, lines: boolean): void {
  let size = 0;
  let line = 0;
  incoming.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return incoming.destroy(tooLarge(`the response body is larger than ${MAX_BODY_BYTES} bytes`));
    if (!lines) return;
    // Linear in the chunk: the line it continues ends at its first line break, the line it leaves
    // open starts after its last; a whole line between them can only pass the bound in a chunk
    // larger than the bound, and only then is the chunk walked line by line.
    const first = lineBreak(chunk, 0);
    if (first === -1) line += chunk.length;
    else {
      let longest = line + first;
      if (chunk.length > MAX_LINE_BYTES) {
        for (let start = first + 1, end = lineBreak(chunk, start); end !== -1; start = end + 1, end = lineBreak(chunk, start)) longest = Math.max(longest, end - start);
      }
      if (longest > MAX_LINE_BYTES) return incoming.destroy(tooLarge(`a line of the response is longer than ${MAX_LINE_BYTES} bytes`));
      line = chunk.length - 1 - Math.max(chunk.lastIndexOf(10), chunk.lastIndexOf(13));
    }
    if (line > MAX_LINE_BYTES) incoming.destroy(tooLarge(`a line of the response is longer than ${MAX_LINE_BYTES} bytes`));
  });
}

/** The first line break (LF or CR) at or after `from`, or -1. */
function lineBreak(chunk: Buffer, from: number): number {
  const lf = chunk.indexOf(10, from);
  const cr = chunk.indexOf(13, from);
  return lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
}

/** A response's headers as `Headers` (repeated ones joined, set-cookie kept apart). */
function responseHeaders(incoming: http.IncomingMessage): Headers {
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return headers;
}
