import "server-only";
import type { IncomingMessage } from "node:http";
import { BlockList, isIP } from "node:net";
import { isAddressOrCidr } from "../config/schema";
import { PEER_HEADER } from "../http/caller";

export { isAddressOrCidr };

/**
 * The client's address of every request, worked out once in the server's request callback (before
 * the API or Next.js sees it) and handed on in the `x-genserve-peer` header (lib/http/caller.ts),
 * any copy the client sent dropped. It is the connection's address, unless that is one of
 * `server.trustedProxies`: then `X-Forwarded-For` is read from the right, skipping trusted proxies,
 * and the first address that is not one is the client (what came before it, the client could write).
 */

/** `::ffff:10.0.0.1` → `10.0.0.1`: IPv4 clients of a dual-stack socket are compared as IPv4. */
const plain = (address: string): string => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
};

/** The trusted proxies as a matcher; null when there are none (X-Forwarded-For is then never read). */
export function trustedProxies(entries: readonly string[]): BlockList | null {
  if (entries.length === 0) return null;
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefix] = entry.split("/");
    const type = isIP(address!) === 6 ? "ipv6" : "ipv4";
    if (prefix === undefined) list.addAddress(plain(address!), type);
    else list.addSubnet(address!, Number(prefix), type);
  }
  return list;
}

const trusted = (list: BlockList, address: string): boolean => {
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 6 ? "ipv6" : "ipv4");
};

/** The client's address: the connection's, or through trusted proxies the nearest untrusted hop of X-Forwarded-For. */
export function clientAddress(remote: string | undefined, forwardedFor: string | string[] | undefined, proxies: BlockList | null): string {
  let address = remote ? plain(remote) : "unknown";
  if (!proxies || !trusted(proxies, address) || forwardedFor === undefined) return address;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor)
    .split(",")
    .map((h) => plain(h.trim()))
    .filter((h) => h !== "");
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (isIP(hop) === 0) return address; // garbage: stop at the last hop that made sense
    address = hop;
    if (!trusted(proxies, hop)) return hop;
  }
  return address;
}

/** Sets the peer header of `req` (both its parsed and raw headers), dropping any copy the client sent. */
export function stampPeer(req: IncomingMessage, proxies: BlockList | null): void {
  const address = clientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], proxies);
  const raw: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() !== PEER_HEADER) raw.push(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  raw.push(PEER_HEADER, address);
  req.rawHeaders = raw;
  req.headers[PEER_HEADER] = address;
}
