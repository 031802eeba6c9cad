import "server-only";
/**
 * Where a sign-in sends the browser afterwards: only a path of this site (`/runs?x=1`), never another
 * origin. `//evil.example`, `/\evil.example`, `https://…`, control characters and anything that
 * does not parse back to the same origin fall back to `/`. The check runs again after the URL parser
 * normalised the path, since `/.//evil.example` and `/%2e//evil.example` resolve to `//evil.example`.
 */
export function safeReturnTo(value: string | null | undefined): string {
  if (!value || value.length > 2_000) return "/";
  if (!value.startsWith("/") || value.startsWith("//") || value.startsWith("/\\")) return "/";
  if (/[\u0000-\u001f\u007f\\]/.test(value)) return "/";
  const base = "http://genserve.invalid";
  try {
    const url = new URL(value, base);
    if (url.origin !== base) return "/";
    const path = `${url.pathname}${url.search}${url.hash}`;
    if (!path.startsWith("/") || path.startsWith("//") || path.startsWith("/\\")) return "/";
    return path;
  } catch {
    return "/";
  }
}
