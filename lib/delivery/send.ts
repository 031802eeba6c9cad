import "server-only";
import type http from "node:http";
import { guardedLookup, RefusedAddressError } from "../net/address-guard";
import { keptAliveAgent, sendReplacingStale } from "../net/kept-alive";
import type { AddressFilter } from "./address-policy";

export type SendResult = { statusCode: number; durationMs: number } | { error: string; durationMs: number; refused?: boolean };

/**
 * Connections to receivers, kept alive between deliveries (a connect and a close less per callback
 * on both ends), pooled apart per address filter: a connection is checked when it is made, against
 * every address its host resolves to (`guardedLookup`), and only ever reused for a callback under
 * the same filter. Filters must be the same functions each time (address-policy's two).
 */
export class ReceiverConnections {
  private readonly agents = new Map<AddressFilter, { http: http.Agent; https: http.Agent }>();

  agent(url: URL, allow: AddressFilter): http.Agent {
    let pair = this.agents.get(allow);
    if (!pair) {
      const lookup = guardedLookup(allow);
      pair = { http: keptAliveAgent("http:", lookup), https: keptAliveAgent("https:", lookup) };
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
 * that the receiver closed just as it was reused is replaced once, within the same time-out
 * (`sendReplacingStale`); should the receiver have seen the event, it sees it again with the same
 * `webhook-id`, as with any retry (delivery is at least once). Rejects when Node refuses the
 * request before sending it (the caller records that as a failed attempt).
 */
export function postEvent(url: URL, headers: Record<string, string>, body: string, options: { timeoutMs: number; agent: http.Agent }): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve, reject) => {
    let settled = false;
    let inFlight: { destroy(): void } | undefined;
    const done = (result: SendResult) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        resolve(result);
      }
    };
    const timer = setTimeout(() => {
      inFlight?.destroy();
      done({ error: `timed out after ${options.timeoutMs} ms`, durationMs: elapsed() });
    }, options.timeoutMs);
    const onResponse = (response: http.IncomingMessage) => {
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
    const onError = (error: NodeJS.ErrnoException) => {
      if (error instanceof RefusedAddressError || error.name === "RefusedAddressError") {
        done({ error: "refused: the host resolves to a private address", refused: true, durationMs: elapsed() });
      } else {
        done({ error: error.code ? `${error.code}: ${error.message}` : error.message, durationMs: elapsed() });
      }
    };
    try {
      inFlight = sendReplacingStale(url, { method: "POST", headers: { ...headers, "content-length": String(Buffer.byteLength(body)) }, body, agent: options.agent }, { onResponse, onError });
    } catch (error) {
      // Nothing was sent, and nothing of it may fire later: the time-out goes too.
      settled = true;
      clearTimeout(timer);
      reject(error);
    }
  });
}
