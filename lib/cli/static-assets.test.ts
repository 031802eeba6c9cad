import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chooseEncoding, createStaticAssets } from "./static-assets";

describe("chooseEncoding", () => {
  it("prefers brotli, falls back to gzip, honours q=0 and *", () => {
    expect(chooseEncoding("gzip, deflate, br, zstd")).toBe("br");
    expect(chooseEncoding("gzip, deflate")).toBe("gzip");
    expect(chooseEncoding("br;q=0, gzip;q=0.5")).toBe("gzip");
    expect(chooseEncoding("identity")).toBeNull();
    expect(chooseEncoding("*")).toBe("br");
    expect(chooseEncoding(undefined)).toBeNull();
  });
});

describe("static assets over HTTP", () => {
  const script = `console.log(${JSON.stringify("monaco ".repeat(5_000))});`;
  let url = "";
  let server: http.Server;
  beforeAll(async () => {
    const dist = mkdtempSync(path.join(os.tmpdir(), "genserve-static-"));
    mkdirSync(path.join(dist, "static", "chunks"), { recursive: true });
    writeFileSync(path.join(dist, "static", "chunks", "a1.js"), script);
    writeFileSync(path.join(dist, "secret.js"), "no");
    const assets = createStaticAssets(dist, [{ key: "X-Content-Type-Options", value: "nosniff" }]);
    server = http.createServer((req, res) => void assets.serve(req, res).then((served) => served || res.writeHead(404, { "x-left-to": "next" }).end()));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const get = (p: string, encoding: string) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      http
        .get(`${url}${p}`, { headers: { "accept-encoding": encoding } }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        })
        .on("error", reject);
    });

  it("answers a hashed asset brotli- or gzip-compressed, cached for a year, with the security headers", async () => {
    const br = await get("/_next/static/chunks/a1.js", "gzip, br");
    expect(br.status).toBe(200);
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers["content-type"]).toBe("application/javascript; charset=utf-8");
    expect(br.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(br.headers.vary).toBe("Accept-Encoding");
    expect(br.headers["x-content-type-options"]).toBe("nosniff");
    expect(zlib.brotliDecompressSync(br.body).toString()).toBe(script);
    expect(br.body.length).toBeLessThan(script.length / 10);
    const gz = await get("/_next/static/chunks/a1.js", "gzip");
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(zlib.gunzipSync(gz.body).toString()).toBe(script);
  });

  it("leaves to Next.js what it does not compress: no encoding accepted, a missing file, a path out of the directory", async () => {
    expect((await get("/_next/static/chunks/a1.js", "identity")).headers["x-left-to"]).toBe("next");
    expect((await get("/_next/static/chunks/missing.js", "br")).headers["x-left-to"]).toBe("next");
    expect((await get("/_next/static/%2e%2e/secret.js", "br")).headers["x-left-to"]).toBe("next");
    expect((await get("/api/v1/stream/object", "br")).headers["x-left-to"]).toBe("next");
  });
});
