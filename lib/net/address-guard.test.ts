import { describe, expect, it } from "vitest";
import { isPrivateAddress, literalAddress } from "./address-guard";

describe("address guard", () => {
  it.each([
    "127.0.0.1",
    "10.1.2.3",
    "172.20.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "::1",
    "::",
    "fd00::1",
    "fe80::1",
    "::ffff:127.0.0.1",
    "::ffff:169.254.169.254",
  ])("refuses %s", (address) => expect(isPrivateAddress(address)).toBe(true));

  it.each(["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"])("allows %s", (address) => expect(isPrivateAddress(address)).toBe(false));

  it("reads literal addresses out of URLs, including decimal, octal and hex IPv4 forms", () => {
    expect(literalAddress(new URL("http://2130706433/"))).toBe("127.0.0.1");
    expect(literalAddress(new URL("http://0177.0.0.1/"))).toBe("127.0.0.1");
    expect(literalAddress(new URL("http://0x7f.1/"))).toBe("127.0.0.1");
    expect(literalAddress(new URL("http://[::ffff:7f00:1]/"))).toBe("::ffff:7f00:1");
    expect(isPrivateAddress("::ffff:7f00:1")).toBe(true);
    expect(literalAddress(new URL("https://example.com/"))).toBeNull();
  });
});
