import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpFetch, MAX_BODY_BYTES, MAX_LINE_BYTES, RESPONSE_TOO_LARGE } from "./http-fetch";

/** A local server whose behaviour each test picks by path. */
let server: http.Server;
let base: string;
const sockets = new Set<import("node:net").Socket>();
const requestsOn = new WeakMap<import("node:net").Socket, number>();
let fallbackCalls = 0;
/** Streams waiting for the test to read their first part before they end. */
const held: (() => void)[] = [];
const httpFetch = createHttpFetch({
  fallback: (input, init) => {
    fallbackCalls++;
    return fetch(input, init);
  },
});

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      const path = req.url ?? "/";
      const served = (requestsOn.get(req.socket) ?? 0) + 1;
      requestsOn.set(req.socket, served);
      if (path === "/reset-when-reused" && served > 1) {
        req.socket.destroy();
      } else if (path === "/echo" || path === "/reset-when-reused") {
        res.writeHead(201, { "content-type": "application/json", "x-one": "1" });
        res.end(JSON.stringify({ method: req.method, body, type: req.headers["content-type"], auth: req.headers.authorization }));
      } else if (path === "/sse" || path === "/ndjson") {
        res.writeHead(200, { "content-type": path === "/sse" ? "text/event-stream" : "application/x-ndjson" });
        res.write(path === "/sse" ? "data: one\n\n" : '{"n":1}\n');
        // The second event comes only once the test says so, after it has read the first.
        held.push(() => res.end(path === "/sse" ? "data: two\n\n" : '{"n":2}\n'));
      } else if (path === "/hang") {
        res.writeHead(200, { "content-type": "application/json" });
        res.write("{");
      } else if (path === "/cut") {
        res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
        res.write("{");
        setTimeout(() => res.destroy(), 20);
      } else if (path.startsWith("/flat/")) {
        // /flat/{type}/{bytes}/{line}: a body of `bytes` in lines of `line` bytes (0: one line).
        const [, , type, bytes, line] = path.split("/");
        res.writeHead(200, type === "none" ? {} : { "content-type": decodeURIComponent(type!) });
        const size = Number(line) || 64 * 1024;
        const chunk = Buffer.alloc(size, "x");
        if (Number(line)) chunk[size - 1] = 10;
        let sent = 0;
        const pump = () => {
          while (sent < Number(bytes) && !res.destroyed) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once("drain", pump);
          }
          if (!res.destroyed) res.end();
        };
        pump();
      } else if (path === "/redirect") {
        res.writeHead(307, { location: "/echo" });
        res.end();
      } else if (path === "/empty") {
        res.writeHead(204);
        res.end();
      }
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => server.close(resolve));
});

describe("createHttpFetch", () => {
  it("posts a text body with its headers and reads the answer's status, headers and body", async () => {
    const response = await httpFetch(`${base}/echo`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer k" }, body: '{"a":"é"}' });
    expect(response.status).toBe(201);
    expect(response.headers.get("x-one")).toBe("1");
    expect(await response.json()).toEqual({ method: "POST", body: '{"a":"é"}', type: "application/json", auth: "Bearer k" });
  });

  it("keeps the connection alive between calls", async () => {
    await (await httpFetch(`${base}/echo`, { method: "POST", body: "1" })).text();
    const before = sockets.size;
    for (let i = 0; i < 5; i++) await (await httpFetch(`${base}/echo`, { method: "POST", body: String(i) })).text();
    expect(sockets.size).toBe(before);
  });

  it("hands an event stream or NDJSON over as it arrives", async () => {
    for (const [path, first, second] of [
      ["/sse", "data: one\n\n", "data: two\n\n"],
      ["/ndjson", '{"n":1}\n', '{"n":2}\n'],
    ]) {
      const response = await httpFetch(`${base}${path}`);
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      // Read before the server wrote the rest: not buffered until the end.
      expect((await reader.read()).value).toBe(first);
      held.shift()!();
      let rest = "";
      for (let r = await reader.read(); !r.done; r = await reader.read()) rest += r.value;
      expect(rest).toBe(second);
    }
  });

  it("cuts any body past its bound, and an event stream's or NDJSON's line past its own, whatever the type says", async () => {
    const MiB = 1024 * 1024;
    const read = async (path: string) => {
      try {
        const response = await httpFetch(`${base}${path}`);
        let bytes = 0;
        const reader = response.body!.getReader();
        for (let r = await reader.read(); !r.done; r = await reader.read()) bytes += r.value.length;
        return { bytes };
      } catch (error) {
        return { error: error as TypeError };
      }
    };
    const past = MAX_BODY_BYTES + 4 * MiB;
    for (const type of ["text%2Fplain", "none", "application%2Fjson", "text%2Fevent-stream"]) {
      const { error } = await read(`/flat/${type}/${past}/65536`);
      expect(error, type).toMatchObject({ message: "fetch failed", cause: { name: RESPONSE_TOO_LARGE } });
    }
    // One line that never ends: cut at the line's bound, long before the body's.
    const line = await read(`/flat/text%2Fevent-stream/${MAX_LINE_BYTES + 2 * MiB}/0`);
    expect(line.error).toMatchObject({ cause: { name: RESPONSE_TOO_LARGE, message: expect.stringContaining("line") } });
    // Long lines are fine in plain text, and many short lines in an event stream.
    expect(await read(`/flat/text%2Fplain/${MAX_LINE_BYTES + 2 * MiB}/0`)).toEqual({ bytes: MAX_LINE_BYTES + 2 * MiB });
    expect(await read(`/flat/application%2Fx-ndjson/${8 * MiB}/1024`)).toEqual({ bytes: 8 * MiB });
  });

  it("rejects with the signal's reason when aborted before, while waiting, or while reading a stream", async () => {
    const aborted = AbortSignal.abort(new DOMException("stop", "AbortError"));
    await expect(httpFetch(`${base}/echo`, { signal: aborted })).rejects.toMatchObject({ name: "AbortError" });
    await expect(httpFetch(`${base}/hang`, { signal: AbortSignal.timeout(50) })).rejects.toMatchObject({ name: "TimeoutError" });

    const controller = new AbortController();
    const response = await httpFetch(`${base}/sse`, { signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort(new DOMException("stop", "AbortError"));
    await expect(reader.read()).rejects.toBeDefined();
  });

  it("fails as fetch does when it cannot connect or the answer is cut short", async () => {
    const refused = await httpFetch("http://127.0.0.1:1/", { method: "POST", body: "x" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TypeError);
    expect((refused as TypeError).message).toBe("fetch failed");
    expect(((refused as TypeError).cause as NodeJS.ErrnoException).code).toBe("ECONNREFUSED");
    await expect(httpFetch(`${base}/cut`)).rejects.toMatchObject({ message: "fetch failed" });
    // Refused by Node before anything is sent.
    await expect(httpFetch(`${base}/echo`, { method: "NOT A METHOD" })).rejects.toMatchObject({ message: "fetch failed", cause: { code: "ERR_INVALID_HTTP_TOKEN" } });
  });

  it("answers 204 without a body, and leaves redirects and other bodies to the fallback", async () => {
    const empty = await httpFetch(`${base}/empty`, { method: "POST", body: "" });
    expect(empty.status).toBe(204);
    expect(await empty.text()).toBe("");

    const calls = fallbackCalls;
    const redirected = await httpFetch(`${base}/redirect`, { method: "POST", body: "r" });
    expect(await redirected.json()).toMatchObject({ body: "r" });
    const form = new FormData();
    form.set("a", "b");
    await (await httpFetch(`${base}/echo`, { method: "POST", body: form })).text();
    expect(fallbackCalls).toBe(calls + 2);
  });

  it("replaces a kept-alive connection the server closed as it was reused", async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => setTimeout(r, 5));
    await (await httpFetch(`${base}/echo`, { method: "POST", body: "warm" })).text();
    // The server closes the kept-alive connection as the next request arrives on it, without an answer.
    const response = await httpFetch(`${base}/reset-when-reused`, { method: "POST", body: "again" });
    expect(await response.json()).toMatchObject({ body: "again" });
  });
});
