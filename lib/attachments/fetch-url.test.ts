import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPrivateAddress } from "../net/address-guard";
import { fetchAttachment } from "./fetch-url";

// The file server runs on 127.0.0.1; these tests treat exactly that address as public, so what is
// checked is the redirect hop to a private address.
let base = "";
let server: http.Server;
let port = 0;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === "/to-metadata") res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data" }).end();
    else if (req.url === "/to-ipv6-loopback") res.writeHead(301, { location: `http://[::1]:${port}/ok` }).end();
    else if (req.url === "/to-ftp") res.writeHead(302, { location: "ftp://example.com/x" }).end();
    else res.writeHead(200, { "content-type": "text/plain" }).end(req.headers.authorization ? "auth was sent" : "ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

const limits = { allowPrivate: false, isAllowedAddress: (a: string) => a === "127.0.0.1" || !isPrivateAddress(a), maxBytes: 1000, timeoutMs: 2000, maxRedirects: 3 };

describe("fetchAttachment", () => {
  it.each(["/to-metadata", "/to-ipv6-loopback"])("refuses a redirect to a private address (%s)", async (path) => {
    await expect(fetchAttachment(`${base}${path}`, 2, limits)).rejects.toMatchObject({
      code: "attachment_fetch_refused",
      errors: [{ path: "/attachments/2/file", message: expect.stringMatching(/private address/) }],
    });
  });

  it("refuses a redirect to another scheme", async () => {
    await expect(fetchAttachment(`${base}/to-ftp`, 0, limits)).rejects.toMatchObject({ code: "attachment_fetch_refused" });
  });

  it("sends no credentials, even when the URL carries them", async () => {
    const fetched = await fetchAttachment(`http://user:secret@127.0.0.1:${port}/ok`, 0, limits);
    expect(fetched.bytes.toString()).toBe("ok");
  });
});
