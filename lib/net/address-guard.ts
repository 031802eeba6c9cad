import "server-only";
import dns from "node:dns";
import net from "node:net";

/**
 * Outbound-request safety (SSRF): which addresses genserve refuses to connect to unless
 * `network.allowPrivate` is true — loopback, private, carrier-grade NAT, link-local (cloud metadata
 * lives there), unique-local, multicast, unspecified — for IPv4 and IPv6, IPv4-mapped IPv6 included.
 */
const blocked = new net.BlockList();
for (const [prefix, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  blocked.addSubnet(prefix, bits, "ipv4");
for (const [prefix, bits] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
  ["64:ff9b::", 96],
  ["2001:db8::", 32],
] as const)
  blocked.addSubnet(prefix, bits, "ipv6");

const LOOPBACK = new net.BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

function normalise(address: string): { address: string; family: "ipv4" | "ipv6" } | null {
  const bare = address.replace(/^\[|\]$/g, "");
  const version = net.isIP(bare);
  if (version === 4) return { address: bare, family: "ipv4" };
  if (version === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
    if (mapped) return { address: mapped[1]!, family: "ipv4" };
    return { address: bare, family: "ipv6" };
  }
  return null;
}

export function isPrivateAddress(address: string): boolean {
  const ip = normalise(address);
  return ip ? blocked.check(ip.address, ip.family) : false;
}

export function isLoopbackAddress(address: string): boolean {
  const ip = normalise(address);
  return ip ? LOOPBACK.check(ip.address, ip.family) : false;
}

/** The hostname of a URL when it is an IP literal (decimal, octal and hex IPv4 forms are normalised by URL). */
export function literalAddress(url: URL): string | null {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return net.isIP(host) ? host : null;
}

export class RefusedAddressError extends Error {
  constructor(readonly host: string) {
    super(`refused: ${host} resolves to a private address`);
    this.name = "RefusedAddressError";
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for node:http(s) that checks every resolved address when the connection is made, so
 * a hostname that resolves to a private address (or is re-pointed there later: DNS rebinding) is
 * refused. `allow` decides per address.
 */
export function guardedLookup(allow: (address: string) => boolean) {
  return function lookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "");
      const list = addresses as dns.LookupAddress[];
      if (list.length === 0 || list.some((a) => !allow(a.address))) return callback(new RefusedAddressError(hostname) as NodeJS.ErrnoException, "");
      if (options.all) return callback(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}
