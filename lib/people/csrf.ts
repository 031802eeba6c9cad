import "server-only";
import { timingSafeEqual } from "node:crypto";
import { GenserveError } from "../errors";

/** Methods that change state: with a session cookie they need a same-origin request and the CSRF token. */
export const UNSAFE_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Whether a request comes from a page of this site: its `Origin` is the public URL's (or the
 * request's own), or, without an Origin, the browser says `Sec-Fetch-Site: same-origin`. A request
 * with neither is refused (browsers send one of them on every cross-site change).
 */
export function sameOrigin(request: Request, publicUrl: string): boolean {
  const origin = request.headers.get("origin");
  if (origin !== null && origin !== "null") {
    const own = [new URL(publicUrl).origin, new URL(request.url).origin];
    return own.includes(origin);
  }
  return request.headers.get("sec-fetch-site") === "same-origin";
}

/** Refuses a cookie-authenticated change from another origin or without the session's CSRF token (403 csrf_refused). */
export function checkCsrf(request: Request, publicUrl: string, expected: string): void {
  if (!sameOrigin(request, publicUrl)) throw new GenserveError("csrf_refused", { detail: "This change came from another site (its Origin is not this one's)." });
  const sent = request.headers.get("x-csrf-token") ?? "";
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  if (a.length !== b.length || !timingSafeEqual(a, b)) {
    throw new GenserveError("csrf_refused", { detail: "Send the session's CSRF token (GET /api/v1/session) in the X-CSRF-Token header." });
  }
}
