import "server-only";

/**
 * The client's address as the server's socket saw it, kept beside the web `Request` the API's
 * listener builds (lib/cli/api-routes.ts) — a web Request carries no socket. genserve has no
 * trusted-proxy setting, so `X-Forwarded-For` is not believed: behind a proxy this is the proxy.
 * Requests Next.js serves itself (`--dev`) have none.
 */
const addresses = new WeakMap<Request, string>();

export function rememberClientAddress(request: Request, address: string | undefined): void {
  if (address) addresses.set(request, address.startsWith("::ffff:") ? address.slice("::ffff:".length) : address);
}

export function clientAddress(request: Request): string | null {
  return addresses.get(request) ?? null;
}
