import "server-only";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { RefusedAddressError } from "../net/address-guard";

export type SendResult = { statusCode: number; durationMs: number } | { error: string; durationMs: number; refused?: boolean };

/**
 * POSTs one event body. No redirects are followed (a 3xx is just a status), no cookies or
 * credentials are added, the whole exchange is bounded by `timeoutMs`, and every address the host
 * resolves to is checked by `lookup` when the connection is made.
 */
export function postEvent(url: URL, headers: Record<string, string>, body: string, options: { timeoutMs: number; lookup: LookupFunction }): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    const done = (result: SendResult) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        resolve(result);
      }
    };
    const client = url.protocol === "https:" ? https : http;
    const request = client.request(
      url,
      { method: "POST", headers: { ...headers, "content-length": String(Buffer.byteLength(body)) }, lookup: options.lookup, agent: false },
      (response) => {
        // The receiver's body is not needed; read (and drop) a bounded amount so the socket closes cleanly.
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > 64 * 1024) response.destroy();
        });
        response.on("end", () => done({ statusCode: response.statusCode ?? 0, durationMs: elapsed() }));
        response.on("error", () => done({ statusCode: response.statusCode ?? 0, durationMs: elapsed() }));
        response.on("close", () => done({ statusCode: response.statusCode ?? 0, durationMs: elapsed() }));
      },
    );
    const timer = setTimeout(() => {
      request.destroy();
      done({ error: `timed out after ${options.timeoutMs} ms`, durationMs: elapsed() });
    }, options.timeoutMs);
    request.on("error", (error: NodeJS.ErrnoException) => {
      if (error instanceof RefusedAddressError || error.name === "RefusedAddressError") {
        done({ error: "refused: the host resolves to a private address", refused: true, durationMs: elapsed() });
      } else {
        done({ error: error.code ? `${error.code}: ${error.message}` : error.message, durationMs: elapsed() });
      }
    });
    request.end(body);
  });
}
