import "server-only";
import http from "node:http";
import https from "node:https";

/** Idle kept-alive connections close after this long: before servers' usual 5 s keep-alive time-out ends them under a request. */
export const KEEP_ALIVE_IDLE_MS = 4_000;

/** An agent keeping connections alive for `KEEP_ALIVE_IDLE_MS`, for http: or https: (`lookup`: how host names resolve). */
export function keptAliveAgent(protocol: "http:" | "https:", lookup?: http.AgentOptions["lookup"]): http.Agent {
  const options = { keepAlive: true, timeout: KEEP_ALIVE_IDLE_MS, ...(lookup && { lookup }) };
  return protocol === "https:" ? new https.Agent(options) : new http.Agent(options);
}

export interface OutgoingRequest {
  method: string;
  headers: Record<string, string>;
  body: string | Uint8Array | undefined;
  agent: http.Agent;
}

/**
 * Sends one request over a kept-alive agent. A kept-alive connection that the server closed just
 * as it was reused (reset before any answer) is replaced by a new one, once: almost always the
 * server had closed an idle connection and saw nothing; should it have seen the request, it sees
 * it twice (callers whose requests must not repeat do not use this).
 *
 * Throws at once when Node refuses the request before sending anything (a header value it will
 * not write, a method that is not a token); any later failure goes to `onError`. The returned
 * handle destroys whichever request is in flight (and nothing is replaced after that).
 */
export function sendReplacingStale(
  url: URL,
  request: OutgoingRequest,
  handlers: { onResponse(response: http.IncomingMessage): void; onError(error: NodeJS.ErrnoException): void },
): { destroy(): void } {
  const client = url.protocol === "https:" ? https : http;
  let current: http.ClientRequest;
  let destroyed = false;
  const send = (retried: boolean) => {
    let answered = false;
    current = client.request(url, { method: request.method, headers: request.headers, agent: request.agent }, (response) => {
      answered = true;
      handlers.onResponse(response);
    });
    const sent = current;
    sent.on("error", (error: NodeJS.ErrnoException) => {
      if (!destroyed && !retried && !answered && sent.reusedSocket && (error.code === "ECONNRESET" || error.code === "EPIPE")) {
        try {
          send(true);
        } catch (refused) {
          handlers.onError(refused as NodeJS.ErrnoException);
        }
        return;
      }
      handlers.onError(error);
    });
    sent.end(request.body);
  };
  send(false);
  return {
    destroy: () => {
      destroyed = true;
      current.destroy();
    },
  };
}
