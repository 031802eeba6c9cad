import { describe, expect, it } from "vitest";
import { clientAddress, isAddressOrCidr, trustedProxies } from "./client-address";

describe("clientAddress", () => {
  it("is the connection's address without trusted proxies, whatever X-Forwarded-For says", () => {
    expect(clientAddress("203.0.113.7", "198.51.100.1", null)).toBe("203.0.113.7");
    expect(clientAddress("::ffff:203.0.113.7", undefined, null)).toBe("203.0.113.7");
    expect(clientAddress(undefined, undefined, null)).toBe("unknown");
    // A client that is not a trusted proxy cannot claim another address.
    expect(clientAddress("203.0.113.7", "198.51.100.1", trustedProxies(["10.0.0.0/8"]))).toBe("203.0.113.7");
  });
  it("reads X-Forwarded-For from the right through trusted proxies only", () => {
    const proxies = trustedProxies(["10.0.0.0/8", "192.0.2.5", "fd00::/8"]);
    expect(clientAddress("10.1.2.3", "198.51.100.1", proxies)).toBe("198.51.100.1");
    // The client wrote a first hop itself: the proxy's appended one counts.
    expect(clientAddress("10.1.2.3", "1.2.3.4, 198.51.100.1", proxies)).toBe("198.51.100.1");
    expect(clientAddress("::ffff:10.1.2.3", ["1.2.3.4", "198.51.100.1, 192.0.2.5"], proxies)).toBe("198.51.100.1");
    expect(clientAddress("fd00::1", "2001:db8::9", proxies)).toBe("2001:db8::9");
    expect(clientAddress("10.1.2.3", "10.9.9.9", proxies)).toBe("10.9.9.9"); // only proxies: the farthest
    expect(clientAddress("10.1.2.3", "not-an-address", proxies)).toBe("10.1.2.3");
    expect(clientAddress("10.1.2.3", undefined, proxies)).toBe("10.1.2.3");
  });
  it("accepts addresses and CIDR blocks as trusted proxies", () => {
    for (const ok of ["10.0.0.1", "10.0.0.0/8", "::1", "fd00::/8", "0.0.0.0/0"]) expect(isAddressOrCidr(ok)).toBe(true);
    for (const bad of ["10.0.0.0/33", "fd00::/129", "example.com", "10.0.0.0/8/1", "10.0.0.0/x", ""]) expect(isAddressOrCidr(bad)).toBe(false);
  });
});
