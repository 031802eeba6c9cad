import "server-only";
import http from "node:http";
import https from "node:https";
import { guardedLookup, RefusedAddressError } from "../net/address-guard";
import type { AddressFilter } from "./address-policy";

export type SendResult = { statusCode: number; durationMs: number } | { error: string; durationMs: number; refused?: boolean };

/** Idle connections to receivers close after this long: before servers' usual 5 s keep-alive time-out ends them under a request. */
const IDLE_MS = 4_000;

/**
 * Connections to receivers, kept alive between deliveries (a connect and a close less per callback
 * on both ends), pooled apart per address filter: a connection is checked when it is made, against
 * every address its host resolves to (`guardedLookup`), and only ever reused for a callback under
 * the same filter. Filters must be the same functions each time (address-policy's two).
 */
export class ReceiverConnections {
  private readonly agents = new Map<AddressFilter, { http: http.Agent; https: https.Agent }>();

  agent(url: URL, allow: AddressFilter): http.Agent {
    let pair = this.agents.get(allow);
    if (!pair) {
      const options = { keepAlive: true, timeout: IDLE_MS, lookup: guardedLookup(allow) };
      pair = { http: new http.Agent(options), https: new https.Agent(options) };
      this.agents.set(allow, pair);
    }
    return url.protocol === "https:" ? pair.https : pair.http;
  }

  /** Closes every connection (the worker stopped). */
  close(): void {
    for (const pair of this.agents.values()) {
      pair.http.destroy();
      pair.https.destroy();
    }
    this.agents.clear();
  }
}

/**
 * POSTs one event body. No redirects are followed (a 3xx is just a status), no cookies or
 * credentials are added, and the whole exchange is bounded by `timeoutMs`. A kept-alive connection
 * that the receiver closed just as it was reused (reset before any answer) is replaced by a new one
 * once, within the same time-out — almost always the receiver closed an idle connection and saw
 * nothing; should it have seen the event, it sees it again with the same `webhook-id`, as with any
 * retry (delivery is at least once).
 */
export function postEvent(url: URL, headers: Record<string, string>, body: string, options: { timeoutMs: number; agent: http.Agent }): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve, reject) => {
    let settled = false;
    let current: http.ClientRequest | undefined;
    const done = (result: SendResult) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        resolve(result);
      }
    };
    const timer = setTimeout(() => {
      current?.destroy();
      done({ error: `timed out after ${options.timeoutMs} ms`, durationMs: elapsed() });
    }, options.timeoutMs);
    const send = (retried: boolean) => {
      const client = url.protocol === "https:" ? https : http;
      let answered = false;
      const onResponse = (response: http.IncomingMessage) => {
        answered = true;
        // The receiver's body is not needed; read (and drop) a bounded amount so the connection can be reused.
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > 64 * 1024) response.destroy();
        });
        response.on("end", () => done({ statusCode: response.statusCode ?? 0, durationMs: elapsed() }));
        response.on("error", () => done({ statusCode: response.statusCode ?? 0, durationMs: elapsed() }));
        response.on("close", () => done({ statusCode: response.statusCode ?? 0, durationMs: elapsed() }));
      };
      let request: http.ClientRequest;
      try {
        request = client.request(url, { method: "POST", headers: { ...headers, "content-length": String(Buffer.byteLength(body)) }, agent: options.agent }, onResponse);
      } catch (error) {
        // Refused before anything was sent (a header value Node will not write): the caller records
        // it; nothing of this request may be left to fire later, the time-out included.
        settled = true;
        clearTimeout(timer);
        reject(error);
        return;
      }
      current = request;
      request.on("error", (error: NodeJS.ErrnoException) => {
        if (settled) return;
        if (!retried && !answered && request.reusedSocket && (error.code === "ECONNRESET" || error.code === "EPIPE")) return send(true);
        if (error instanceof RefusedAddressError || error.name === "RefusedAddressError") {
          done({ error: "refused: the host resolves to a private address", refused: true, durationMs: elapsed() });
        } else {
          done({ error: error.code ? `${error.code}: ${error.message}` : error.message, durationMs: elapsed() });
        }
      });
      request.end(body);
    };
    send(false);
  });
}
