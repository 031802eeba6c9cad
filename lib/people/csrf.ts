import "server-only";
import { timingSafeEqual } from "node:crypto";
import { GenserveError } from "../errors";

/** Methods that change state: with a session cookie they need a same-origin request and the CSRF token. */
export const UNSAFE_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Whether a request comes from a page of this site. A browser's `Sec-Fetch-Site` (no script can set
 * it) decides when sent: `same-origin` passes, anything else does not. Otherwise its `Origin` must be
 * the public URL's or the request's own. A request with neither is refused (browsers send one of them
 * on every cross-site change). Sec-Fetch-Site first: behind an https proxy without
 * `server.publicUrl`, the Origin (https) is not the request's own URL (http) though the page is ours.
 */
export function sameOrigin(request: Request, publicUrl: string): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null) return site === "same-origin";
  const origin = request.headers.get("origin");
  if (origin === null || origin === "null") return false;
  return [new URL(publicUrl).origin, new URL(request.url).origin].includes(origin);
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
