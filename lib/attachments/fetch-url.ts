import "server-only";
import http from "node:http";
import https from "node:https";
import { GenserveError, validationError } from "../errors";
import { guardedLookup, isPrivateAddress, literalAddress, RefusedAddressError } from "../net/address-guard";

export interface FetchLimits {
  allowPrivate: boolean;
  /** Which resolved or literal addresses may be contacted; by default, public ones (or all with allowPrivate). */
  isAllowedAddress?: (address: string) => boolean;
  /** Bytes this file may have; reading stops as soon as it passes. */
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
}

export interface Fetched {
  bytes: Buffer;
  contentType: string | null;
  url: string;
}

/**
 * Fetches an attachment URL as an SSRF-safe client: http/https only, every resolved address
 * checked at connect time (private, loopback, link-local, unique-local, metadata refused unless
 * allowed), at most `maxRedirects` redirects each checked again, one deadline for the whole fetch,
 * the size capped while reading, and no credentials or cookies sent. Refusals never reveal the
 * internal address.
 */
export async function fetchAttachment(raw: string, index: number, limits: FetchLimits): Promise<Fetched> {
  const deadline = Date.now() + limits.timeoutMs;
  const refused = (reason: string) =>
    new GenserveError("attachment_fetch_refused", { detail: `attachments[${index}]: ${reason}.`, errors: [{ path: `/attachments/${index}/file`, message: reason }] });
  const failed = (reason: string) =>
    new GenserveError("attachment_fetch_failed", { detail: `attachments[${index}]: ${reason}.`, errors: [{ path: `/attachments/${index}/file`, message: reason }] });

  const allowed = limits.isAllowedAddress ?? ((address: string) => limits.allowPrivate || !isPrivateAddress(address));
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw validationError([{ path: `/attachments/${index}/file`, message: "is not a valid URL" }]);
  }
  for (let hop = 0; ; hop++) {
    if (url.protocol !== "http:" && url.protocol !== "https:") throw refused(`only http and https URLs are fetched, not ${url.protocol}`);
    url.username = "";
    url.password = "";
    const literal = literalAddress(url);
    if (literal && !allowed(literal)) throw refused("the URL refers to a private address");
    const response = await get(url, allowed, deadline).catch((error: Error) => {
      if (error instanceof RefusedAddressError || error.name === "RefusedAddressError") throw refused("the host resolves to a private address");
      throw failed(error.message === "deadline" ? `the fetch took longer than ${limits.timeoutMs} ms` : `the fetch failed (${(error as NodeJS.ErrnoException).code ?? error.message})`);
    });
    const status = response.statusCode ?? 0;
    if (status >= 300 && status < 400 && response.headers.location) {
      response.resume();
      if (hop >= limits.maxRedirects) throw refused(`more than ${limits.maxRedirects} redirects`);
      try {
        url = new URL(response.headers.location, url);
      } catch {
        throw failed("the server redirected to an address that is not a valid URL");
      }
      continue;
    }
    if (status < 200 || status >= 300) {
      response.resume();
      throw failed(`the server answered ${status}`);
    }
    const declared = Number(response.headers["content-length"] ?? "NaN");
    if (Number.isFinite(declared) && declared > limits.maxBytes) {
      response.destroy();
      throw new GenserveError("payload_too_large", { detail: `attachments[${index}] is ${declared} bytes; the limit is ${limits.maxBytes} bytes (limits.attachmentBytes).` });
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of response as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > limits.maxBytes) {
          response.destroy();
          throw new GenserveError("payload_too_large", { detail: `attachments[${index}] is larger than the limit of ${limits.maxBytes} bytes (limits.attachmentBytes).` });
        }
        chunks.push(chunk);
      }
    } catch (error) {
      if (error instanceof GenserveError) throw error;
      throw failed(Date.now() >= deadline ? `the fetch took longer than ${limits.timeoutMs} ms` : "the connection broke while reading");
    }
    return { bytes: Buffer.concat(chunks), contentType: (response.headers["content-type"] ?? null) as string | null, url: url.toString() };
  }
}

function get(url: URL, allowed: (address: string) => boolean, deadline: number): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const client = url.protocol === "https:" ? https : http;
    const request = client.get(url, {
      agent: false,
      lookup: guardedLookup(allowed),
      headers: { accept: "*/*", "user-agent": "genserve" },
    });
    const timer = setTimeout(() => request.destroy(new Error("deadline")), Math.max(0, deadline - Date.now()));
    request.on("response", (response) => {
      response.on("close", () => clearTimeout(timer));
      resolve(response);
    });
    request.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
