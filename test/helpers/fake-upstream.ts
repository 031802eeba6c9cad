import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A fake OpenAI-compatible chat-completions server on loopback. Tests script its replies and read
 * back every request it received; with no scripted reply it answers with a minimal instance of the
 * requested JSON Schema (or an echo of the input for text).
 */
export interface FakeReply {
  content?: string;
  /** Answer with this HTTP status and an error body instead. */
  status?: number;
  /** With `status`: the error message in the body (providers echo credentials and internals there). */
  errorMessage?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** The reason the model stopped (default "stop"; "length": it reached its output limit). */
  finishReason?: string;
  model?: string;
  delayMs?: number;
  /** Answer only once this settles: a test holds the model until what it checks is in place, instead of guessing a delay. */
  waitFor?: Promise<unknown>;
  /** Streaming: size of each content chunk (default 8 characters). */
  chunkSize?: number;
  /** Streaming: destroy the connection after this many content chunks. */
  cutAfterChunks?: number;
  /** Streaming: pause between chunks. */
  chunkDelayMs?: number;
  /** Streaming: after this many content chunks, send nothing more until the client closes (a model that stalls); not streaming: never answer. */
  holdAfterChunks?: number;
  /** Streaming: after each of these many content chunks, wait until a test asks `POST /__release` (or the client closes). */
  pauseAfterChunks?: number[];
}

/**
 * Put this in a prompt and `holdWhenAsked` makes the model stall mid-stream until the caller goes
 * away: browser tests, which cannot script the upstream, use it to cancel a run that is surely live.
 */
export const HOLD_MARKER = "[model: hold the stream]";

/** A responder for `respondWith`: a request whose messages contain HOLD_MARKER stalls after a few chunks. */
export function holdWhenAsked(afterChunks = 12): (body: ReceivedRequest["body"]) => FakeReply | undefined {
  return (body) => (JSON.stringify(body.messages).includes(HOLD_MARKER) ? { holdAfterChunks: afterChunks } : undefined);
}

/**
 * Put "[model: a list of N items]" in a prompt and `longListWhenAsked` answers with an object of
 * N small items, streamed in 8-character deltas as fast as the connection takes them (browser
 * tests of long outputs, which cannot script the upstream).
 */
export const longListMarker = (items: number) => `[model: a list of ${items} items]`;

export function longList(items: number): { items: { id: number; title: string; tags: string[]; price: number; available: boolean }[] } {
  return { items: Array.from({ length: items }, (_, i) => ({ id: i, title: `Item number ${i}`, tags: ["alpha", "beta"], price: i * 1.25, available: i % 2 === 0 })) };
}

/** The JSON Schema `longList`'s objects follow. */
export const LONG_LIST_SCHEMA = {
  type: "object",
  properties: {
    items: {
      type: "array",
      items: {
        type: "object",
        properties: { id: { type: "integer" }, title: { type: "string" }, tags: { type: "array", items: { type: "string" } }, price: { type: "number" }, available: { type: "boolean" } },
        required: ["id", "title", "tags", "price", "available"],
      },
    },
  },
  required: ["items"],
};

export function longListWhenAsked(): (body: ReceivedRequest["body"]) => FakeReply | undefined {
  return (body) => {
    const messages = JSON.stringify(body.messages);
    const found = /\[model: a list of (\d+) items\]/.exec(messages);
    if (!found) return undefined;
    const content = JSON.stringify(longList(Number(found[1])));
    // With PAUSE_MARKER the list stops at a third and at two thirds of its chunks until released.
    const chunks = Math.ceil(content.length / 8);
    return { content, chunkDelayMs: 0, ...(messages.includes(PAUSE_MARKER) && { pauseAfterChunks: [Math.floor(chunks / 3), Math.floor((2 * chunks) / 3)] }) };
  };
}

/**
 * Put this beside a long-list marker and the list pauses twice mid-stream, each time until
 * `POST <upstream>/__release`; `GET <upstream>/__paused` says how many streams wait. Browser tests
 * check what must hold while a stream is live at a point where it surely is.
 */
export const PAUSE_MARKER = "[model: pause the list]";

export interface ReceivedRequest {
  path: string;
  /** The client closed the connection before the reply was complete (e.g. genserve cancelled). */
  closedEarly: boolean;
  headers: http.IncomingHttpHeaders;
  body: {
    model: string;
    messages: { role: string; content: unknown }[];
    stream?: boolean;
    response_format?: { type: string; json_schema?: { schema: Record<string, unknown>; name?: string; strict?: boolean } };
    temperature?: number;
    max_tokens?: number;
  };
}

export interface FakeUpstream {
  url: string;
  requests: ReceivedRequest[];
  reply(...replies: FakeReply[]): void;
  /** Replies computed from each request (after the scripted queue runs out); reset() removes it. */
  respondWith(responder: ((body: ReceivedRequest["body"]) => FakeReply | undefined) | null): void;
  reset(): void;
  close(): Promise<void>;
}

export async function startFakeUpstream(
  defaults: { chunkDelayMs?: number; delayMs?: number; port?: number; /** false: keep no requests (benchmarks send millions). */ record?: boolean } = {},
): Promise<FakeUpstream> {
  const queue: FakeReply[] = [];
  const requests: ReceivedRequest[] = [];
  let responder: ((body: ReceivedRequest["body"]) => FakeReply | undefined) | null = null;
  const sockets = new Set<import("node:net").Socket>();

  let lastBody = "{}";
  /** Streams waiting at a pause (pauseAfterChunks), each with its release. */
  const paused = new Set<() => void>();

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.url?.endsWith("/__paused")) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ paused: paused.size }));
      return;
    }
    if (req.url?.endsWith("/__release")) {
      const waiting = [...paused];
      paused.clear();
      waiting.forEach((release) => release());
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ released: waiting.length }));
      return;
    }
    if (req.method === "GET" && req.url?.endsWith("/__last-request")) {
      // The last chat request's body as sent (benchmarks replay what genserve sends).
      res.writeHead(200, { "content-type": "application/json" }).end(lastBody);
      return;
    }
    const text = Buffer.concat(chunks).toString("utf8");
    const body = JSON.parse(text || "{}") as ReceivedRequest["body"];
    const record: ReceivedRequest = { path: req.url ?? "", headers: req.headers, body, closedEarly: false };
    if (defaults.record !== false) requests.push(record);
    if (req.method === "POST") lastBody = text || "{}";
    res.on("close", () => {
      if (!res.writableFinished) record.closedEarly = true;
    });
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "not found" } }));
      return;
    }
    const reply = queue.shift() ?? responder?.(body) ?? {};
    const delay = reply.delayMs ?? defaults.delayMs;
    if (delay) await new Promise((r) => setTimeout(r, delay));
    if (reply.waitFor) await reply.waitFor;
    if (res.destroyed) return;
    if (reply.status) {
      res.writeHead(reply.status, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: reply.errorMessage ?? `scripted ${reply.status}`, type: "server_error" } }));
      return;
    }
    let content: string;
    try {
      content = reply.content ?? defaultContent(body);
    } catch {
      // A schema this helper cannot make an instance of (the fuzz suite sends strange ones).
      content = "{}";
    }
    const model = reply.model ?? `${body.model}-served`;
    const usage = reply.usage ?? { prompt_tokens: 11, completion_tokens: 7 };
    const usageBody = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
    const base = { id: "chatcmpl-fake", created: Math.floor(Date.now() / 1000), model };

    if (!body.stream) {
      // Held: a whole answer never comes; the caller must give up (tests of Cancel).
      if (reply.holdAfterChunks !== undefined) {
        if (!res.destroyed) await new Promise((r) => res.once("close", r));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          ...base,
          object: "chat.completion",
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: reply.finishReason ?? "stop" }],
          usage: usageBody,
        }),
      );
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.flushHeaders();
    const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
    const size = reply.chunkSize ?? 8;
    let sent = 0;
    for (let i = 0; i < content.length; i += size) {
      if (reply.cutAfterChunks !== undefined && sent >= reply.cutAfterChunks) {
        // Let what was written reach the client first: the cut must come mid-stream.
        await new Promise((r) => setTimeout(r, 50));
        res.socket?.destroy();
        return;
      }
      send({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta: { role: "assistant", content: content.slice(i, i + size) }, finish_reason: null }] });
      sent++;
      if (reply.holdAfterChunks !== undefined && sent >= reply.holdAfterChunks) {
        if (!res.destroyed) await new Promise((r) => res.once("close", r));
        return;
      }
      if (reply.pauseAfterChunks?.includes(sent) && !res.destroyed) {
        await new Promise<void>((resolve) => {
          const release = () => resolve();
          paused.add(release);
          res.once("close", () => {
            paused.delete(release);
            resolve();
          });
        });
        if (res.destroyed) return;
      }
      const pause = reply.chunkDelayMs ?? defaults.chunkDelayMs;
      if (pause) await new Promise((r) => setTimeout(r, pause));
      if (res.destroyed) return;
    }
    send({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: reply.finishReason ?? "stop" }] });
    send({ ...base, object: "chat.completion.chunk", choices: [], usage: usageBody });
    res.end("data: [DONE]\n\n");
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen({ port: defaults.port ?? 0, host: "127.0.0.1", backlog: 4096 }, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    reply: (...replies) => void queue.push(...replies),
    respondWith: (next) => void (responder = next),
    reset: () => {
      responder = null;
      queue.length = 0;
      requests.length = 0;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function defaultContent(body: ReceivedRequest["body"]): string {
  const schema = body.response_format?.json_schema?.schema;
  if (schema) return JSON.stringify(instanceOf(schema, schema, 0));
  const last = [...body.messages].reverse().find((m) => m.role === "user");
  return `echo: ${typeof last?.content === "string" ? last.content : JSON.stringify(last?.content)}`;
}

const FORMAT_EXAMPLES: Record<string, string> = {
  email: "ada@example.com",
  date: "2026-01-31",
  "date-time": "2026-01-31T12:00:00Z",
  time: "12:00:00Z",
  uri: "https://example.com/",
  uuid: "123e4567-e89b-42d3-a456-426614174000",
};

/** A minimal value that validates against common schemas (enough for default replies). */
export function instanceOf(schema: Record<string, unknown>, root: Record<string, unknown>, depth: number): unknown {
  if (depth > 20 || schema === null || typeof schema !== "object") return null;
  if (typeof schema.$ref === "string") {
    const target = schema.$ref === "#" ? root : schema.$ref
      .slice(2)
      .split("/")
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)?.[key], root);
    return instanceOf(target as Record<string, unknown>, root, depth + 1);
  }
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const variants = (schema.anyOf ?? schema.oneOf) as Record<string, unknown>[] | undefined;
  if (Array.isArray(variants) && variants.length > 0) return instanceOf(variants[0]!, root, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
      return Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, instanceOf(v, root, depth + 1)]));
    }
    case "array": {
      const items = (schema.items ?? {}) as Record<string, unknown>;
      return Array.from({ length: (schema.minItems as number | undefined) ?? 1 }, () => instanceOf(items, root, depth + 1));
    }
    case "integer":
    case "number":
      return (schema.minimum as number | undefined) ?? 1;
    case "boolean":
      return true;
    case "null":
      return null;
    default:
      return FORMAT_EXAMPLES[schema.format as string] ?? "text";
  }
}
