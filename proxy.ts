import { NextResponse, type NextRequest } from "next/server";

/**
 * The policy of the playground's pages: scripts only from this origin, through a per-request nonce
 * (Next.js puts it on its own scripts; 'strict-dynamic' lets them load the app's chunks), workers
 * from this origin (Monaco's editor and JSON workers), no plugins, no framing, no connections to
 * other origins. Styles allow inline: Monaco and React set style attributes and inject <style>.
 * Development (hot reload) needs eval and a websocket.
 */
export function contentSecurityPolicy(nonce: string, dev = false): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src 'self'${dev ? " ws: wss:" : ""}`,
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/**
 * Pages get a Content-Security-Policy with a fresh nonce: Next.js reads it from the request and puts
 * it on the scripts it renders (pages render per request for that reason). API routes and static
 * files are not matched: they carry no HTML, and the API's hot path stays as it was. The other
 * security headers are set for every response in next.config.ts.
 */
export function proxy(request: NextRequest) {
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
  const policy = contentSecurityPolicy(nonce, process.env.NODE_ENV === "development");
  const headers = new Headers(request.headers);
  headers.set("content-security-policy", policy);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("Content-Security-Policy", policy);
  return response;
}

export const config = {
  matcher: [{ source: "/((?!api/|v1/|_next/static|_next/image|favicon.svg|healthz|readyz).*)" }],
};
