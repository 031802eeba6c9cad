import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A webhook receiver on loopback: records every request; answers scripted statuses (200 by default). */
export async function startReceiver() {
  const received: Received[] = [];
  const script: { status?: number; delayMs?: number; location?: string }[] = [];
  const sockets = new Set<import("node:net").Socket>();
  let connections = 0;
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
    const step = script.shift() ?? {};
    if (step.delayMs) await new Promise((r) => setTimeout(r, step.delayMs));
    if (res.destroyed) return;
    res.writeHead(step.status ?? 200, step.location ? { location: step.location } : {}).end("ok");
  });
  server.on("connection", (s) => {
    connections++;
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    received,
    /** Connections accepted so far. */
    connections: () => connections,
    /** Closes every open connection (idle kept-alive ones included), as a server restarting would. */
    dropConnections: () => {
      for (const s of sockets) s.destroy();
    },
    script: (...steps: { status?: number; delayMs?: number; location?: string }[]) => void script.push(...steps),
    reset: () => {
      received.length = 0;
      script.length = 0;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Polls `check` until it holds. The time-out only guards against a hang: it returns as soon as the
 * condition holds, so it is generous (a loaded machine can take many times longer than an idle one).
 */
export async function waitUntil(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}
