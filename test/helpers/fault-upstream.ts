import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";

/**
 * An OpenAI-compatible upstream that misbehaves, for the fault suite: each fault is a base URL
 * (`url(fault)`), so one genserve configuration can name a model per fault. What each one does
 * to a chat-completions request:
 *
 * - `silent`: reads the request and never answers;
 * - `headers`: sends 200 and its headers (JSON, or an event stream when asked to stream), then nothing;
 * - `stall`: streams the start of an object, then nothing (a request that does not stream: `headers`);
 * - `drip`: an event stream that never ends, one short delta every 100 ms;
 * - `huge-text`, `huge-untyped`, `huge-json`: a 200 whose body is `hugeBytes` long (text/plain, no
 *   content type, application/json), written as fast as it is read;
 * - `huge-line`: an event stream whose first `data:` line never ends (`hugeBytes` of it);
 * - `flood`: an event stream of valid deltas, as fast as it is read, that never finishes;
 * - `bad-utf8`: a complete answer whose content holds bytes that are not UTF-8;
 * - `cut`: an event stream cut (the connection destroyed) after a few deltas;
 * - `retry-hour`: 429 with `Retry-After: 3600`.
 *
 * Two more are addresses rather than behaviours: `unreadUrl`, a listener that accepts connections
 * and never reads from them, and `refusedUrl`, a port nothing listens on.
 */
export type Fault = "silent" | "headers" | "stall" | "drip" | "huge-text" | "huge-untyped" | "huge-json" | "huge-line" | "flood" | "bad-utf8" | "cut" | "retry-hour";

export interface FaultUpstream {
  url(fault: Fault): string;
  unreadUrl: string;
  refusedUrl: string;
  /** Requests received per fault. */
  received: Map<string, number>;
  /** HTTP connections still open (the client should have closed the ones of runs that ended). */
  openConnections(): number;
  close(): Promise<void>;
}

const MiB = 1024 * 1024;

export async function startFaultUpstream(options: { hugeBytes?: number } = {}): Promise<FaultUpstream> {
  const hugeBytes = options.hugeBytes ?? 300 * MiB;
  const received = new Map<string, number>();
  const sockets = new Set<net.Socket>();
  const base = () => ({ id: "chatcmpl-fault", created: Math.floor(Date.now() / 1000), model: "fault" });
  const delta = (content: string, finish: string | null = null) =>
    `data: ${JSON.stringify({ ...base(), object: "chat.completion.chunk", choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const fault = (/^\/f\/([\w-]+)\//.exec(req.url ?? "")?.[1] ?? "") as Fault;
    received.set(fault, (received.get(fault) ?? 0) + 1);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as { stream?: boolean };
    const stream = body.stream === true;
    const hold = () => new Promise((resolve) => res.once("close", resolve));
    switch (fault) {
      case "silent":
        return hold();
      case "headers":
        res.writeHead(200, { "content-type": stream ? "text/event-stream" : "application/json" });
        res.flushHeaders();
        return hold();
      case "stall":
        res.writeHead(200, { "content-type": stream ? "text/event-stream" : "application/json" });
        if (stream) res.write(delta('{"number": "INV-'));
        res.flushHeaders();
        return hold();
      case "drip": {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(delta('{"number": "'));
        const timer = setInterval(() => res.write(delta("9")), 100);
        await hold();
        return clearInterval(timer);
      }
      case "huge-text":
      case "huge-untyped":
      case "huge-json":
      case "huge-line": {
        const type = { "huge-text": "text/plain", "huge-untyped": undefined, "huge-json": "application/json", "huge-line": "text/event-stream" }[fault];
        res.writeHead(200, type ? { "content-type": type } : {});
        if (fault === "huge-line") res.write("data: ");
        return writeFlat(res, hugeBytes, Buffer.alloc(64 * 1024, "x"));
      }
      case "flood": {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(delta('{"number": "'));
        return writeFlat(res, Number.POSITIVE_INFINITY, Buffer.from(delta("1").repeat(200)));
      }
      case "bad-utf8": {
        // Escaped as a JSON string's content would be, around three bytes no UTF-8 text holds.
        const escaped = (text: string) => Buffer.from(JSON.stringify(text).slice(1, -1));
        const content = Buffer.concat([escaped('{"number": "INV-'), Buffer.from([0xff, 0xfe, 0xc3]), escaped('", "total": 1, "currency": "EUR"}')]);
        const json = (content: string) => JSON.stringify({ ...base(), object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 } });
        // The content's bytes spliced into the JSON text raw, where a placeholder stood.
        const [before, after] = json("\u0000").split("\\u0000");
        res.writeHead(200, { "content-type": stream ? "text/event-stream" : "application/json" });
        if (!stream) return res.end(Buffer.concat([Buffer.from(before!), content, Buffer.from(after!)]));
        const [head, tail] = delta("\u0000").split("\\u0000");
        res.write(Buffer.concat([Buffer.from(head!), content, Buffer.from(tail!)]));
        return res.end(`${delta("", "stop")}data: [DONE]\n\n`);
      }
      case "cut":
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(delta('{"number": '));
        res.write(delta('"INV-1", '));
        await new Promise((resolve) => setTimeout(resolve, 50));
        return res.socket?.destroy();
      case "retry-hour":
        return res.writeHead(429, { "content-type": "application/json", "retry-after": "3600" }).end(JSON.stringify({ error: { message: "slow down", type: "rate_limit" } }));
      default:
        return res.writeHead(404).end();
    }
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

  // Accepts and never reads: the request sits in the socket's buffers, unanswered.
  // (A paused socket does not see its peer close, so these are not counted as open connections.)
  const unreadSockets = new Set<net.Socket>();
  const unread = net.createServer({ pauseOnConnect: true }, (socket) => {
    unreadSockets.add(socket);
    socket.on("close", () => unreadSockets.delete(socket));
  });
  await new Promise<void>((resolve) => unread.listen(0, "127.0.0.1", resolve));

  // A port that was just free: nothing listens on it.
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const refusedPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));

  const { port } = server.address() as AddressInfo;
  return {
    url: (fault) => `http://127.0.0.1:${port}/f/${fault}/v1`,
    unreadUrl: `http://127.0.0.1:${(unread.address() as AddressInfo).port}/v1`,
    refusedUrl: `http://127.0.0.1:${refusedPort}/v1`,
    received,
    openConnections: () => sockets.size,
    close: async () => {
      for (const socket of [...sockets, ...unreadSockets]) socket.destroy();
      await Promise.all([server, unread].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}

/** Writes `chunk` over and over until `total` bytes went out or the client went away, heeding backpressure. */
async function writeFlat(res: http.ServerResponse, total: number, chunk: Buffer): Promise<void> {
  let sent = 0;
  while (sent < total && !res.destroyed) {
    sent += chunk.length;
    if (!res.write(chunk)) await new Promise((resolve) => (res.once("drain", resolve), res.once("close", resolve)));
  }
  if (!res.destroyed) res.end();
}
