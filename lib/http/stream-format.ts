import "server-only";
import { once } from "node:events";
import type { StreamEvent, StreamHub } from "../runs/stream-hub";
import { writableDirectly } from "./direct";

/** Ends a stream whose events ran out without a final one (the run was finished by another process). */
export type StreamEnding = () => Promise<StreamEvent | null>;

export type StreamFormat = "sse" | "ndjson";

/**
 * Framing of stream/object. SSE: data items are default events, every event carries its sequence
 * number as `id:` (what Last-Event-ID resumes from); the final event is `event: done` or
 * `event: error`; `event: restart` tells clients to discard what they had (field events included);
 * `event: field` (only for `?fields=true`) says a value is complete. NDJSON: one JSON value per
 * line (line N is event N): the same items, then `{"type":"done",...}` or
 * `{"type":"error","error":{problem}}`, `{"type":"restart",...}` and `{"type":"field",...}`.
 */
export interface StreamEncoder {
  readonly contentType: string;
  encode(event: StreamEvent): string;
  /** A keep-alive line, or null where the format has none. */
  ping(): string | null;
  /**
   * True once the encoder has written its last event though the run goes on (OpenAI's chunks end
   * at a restart): the response is then closed at once, without keep-alives, and the run is not
   * cancelled. Formats that follow the run to its final event leave it out.
   */
  ended?(): boolean;
}

const itemJson = (text: string) => JSON.stringify({ type: "object", object: { text } });
const fieldJson = (event: Extract<StreamEvent, { kind: "field" }>) =>
  JSON.stringify({ type: "field", attempt: event.attempt, pointer: event.pointer, value: event.value, valid: event.valid });

export const sseEncoder: StreamEncoder = {
  contentType: "text/event-stream; charset=utf-8",
  encode(event) {
    switch (event.kind) {
      case "item":
        return `id: ${event.seq}\ndata: ${itemJson(event.text)}\n\n`;
      case "restart":
        return `id: ${event.seq}\nevent: restart\ndata: ${JSON.stringify({ type: "restart", attempt: event.attempt })}\n\n`;
      case "field":
        return `id: ${event.seq}\nevent: field\ndata: ${fieldJson(event)}\n\n`;
      case "done":
        return `id: ${event.seq}\nevent: done\ndata: ${JSON.stringify(event.payload)}\n\n`;
      case "error":
        return `id: ${event.seq}\nevent: error\ndata: ${JSON.stringify(event.problem)}\n\n`;
    }
  },
  ping: () => ": ping\n\n",
};

export const ndjsonEncoder: StreamEncoder = {
  contentType: "application/x-ndjson; charset=utf-8",
  encode(event) {
    switch (event.kind) {
      case "item":
        return `${itemJson(event.text)}\n`;
      case "restart":
        return `${JSON.stringify({ type: "restart", attempt: event.attempt })}\n`;
      case "field":
        return `${fieldJson(event)}\n`;
      case "done":
        return `${JSON.stringify({ type: "done", ...event.payload })}\n`;
      case "error":
        // The problem body has a "type" of its own (its URI), so it travels under "error".
        return `${JSON.stringify({ type: "error", error: event.problem })}\n`;
    }
  },
  ping: () => null,
};

/**
 * Events that are waiting together, as one piece of text: consecutive items are joined into one
 * item (its text theirs in order, its sequence number the last one's, so that resuming from it
 * loses nothing), every other event as it is.
 */
export function encodeBatch(encoder: StreamEncoder, events: readonly StreamEvent[]): string {
  let out = "";
  let texts: string[] = [];
  let seq = 0;
  const flush = () => {
    if (texts.length === 0) return;
    out += encoder.encode({ kind: "item", seq, text: texts.length === 1 ? texts[0]! : texts.join("") });
    texts = [];
  };
  for (const event of events) {
    if (event.kind === "item") {
      texts.push(event.text);
      seq = event.seq;
    } else {
      flush();
      out += encoder.encode(event);
    }
  }
  flush();
  return out;
}

/** NDJSON when the client asks for it in Accept; SSE otherwise. */
export function chooseFormat(accept: string | null): StreamFormat {
  return accept && /application\/x-ndjson/i.test(accept) ? "ndjson" : "sse";
}

export const encoderFor = (format: StreamFormat): StreamEncoder => (format === "ndjson" ? ndjsonEncoder : sseEncoder);

/** Where a stream's text goes: a web stream's queue, or a Node response written directly. */
interface EventSink {
  /** Writes the text; a promise when the writer should wait before the next (the client reads slowly). */
  write(text: string): void | Promise<void>;
  close(): void;
}

interface FollowOptions {
  keepAliveMs: number;
  ending?: StreamEnding;
}

/** Where a response's events come from: batches of a run's stream, until its final event. */
export type EventSource = (signal: AbortSignal) => AsyncIterable<readonly StreamEvent[]>;

/**
 * Writes a run's stream into `sink`: its events (after `afterSeq`, from the hub or another source)
 * to the final event, with keep-alive comments while the model is silent; until `signal` aborts
 * (the client went away).
 */
function follow(source: EventSource, afterSeq: number, encoder: StreamEncoder, options: FollowOptions, sink: EventSink, signal: AbortSignal): void {
  let lastWrite = Date.now();
  const write = (text: string) => {
    lastWrite = Date.now();
    return sink.write(text);
  };
  let keepalive: NodeJS.Timeout | undefined;
  const ping = encoder.ping();
  if (ping) {
    keepalive = setInterval(() => {
      if (Date.now() - lastWrite >= options.keepAliveMs) void write(ping);
    }, Math.min(1_000, options.keepAliveMs));
    keepalive.unref();
    signal.addEventListener("abort", () => clearInterval(keepalive), { once: true });
  }
  void (async () => {
    try {
      let last: StreamEvent | undefined;
      let over = false;
      for await (const batch of source(signal)) {
        await write(encodeBatch(encoder, batch));
        last = batch[batch.length - 1];
        if (encoder.ended?.()) {
          // The format has said its last word (the run goes on): stop pinging and close now, or a
          // client that reads to the end would wait for the run.
          over = true;
          clearInterval(keepalive);
          break;
        }
      }
      if (!over && !signal.aborted && last?.kind !== "done" && last?.kind !== "error" && options.ending) {
        const final = await options.ending();
        if (final && !signal.aborted) await write(encoder.encode({ ...final, seq: Math.max(last?.seq ?? afterSeq, afterSeq) + 1 }));
      }
      if (!signal.aborted) sink.close();
    } catch {
      // The client went away while we wrote: nothing left to tell it.
    } finally {
      clearInterval(keepalive);
    }
  })();
}

/**
 * A run's stream as a web stream, for servers that read responses' bodies (Next.js in development).
 * It starts following only when first read, so a response written directly (`writableDirectly`)
 * never starts it.
 */
function eventStream(start: (sink: EventSink, signal: AbortSignal) => void, onDisconnect?: () => void): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder();
  const stop = new AbortController();
  let started = false;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (started) return;
        started = true;
        // An empty first chunk: Next.js sends the response head (X-Run-ID included) with the first
        // chunk, so a client learns the run id at once, not with the model's first token, and can
        // resume by it if it drops early. No bytes are added to either framing.
        controller.enqueue(new Uint8Array(0));
        start({ write: (text) => controller.enqueue(bytes.encode(text)), close: () => controller.close() }, stop.signal);
      },
      cancel() {
        stop.abort();
        onDisconnect?.();
      },
    },
    { highWaterMark: 0 },
  );
}

const done = () => undefined;

/** The headers of every streamed response: no caching or transforming proxies, the run's id. */
export function streamHeaders(contentType: string, runId: string): Record<string, string> {
  return { "Content-Type": contentType, "Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no", "X-Run-ID": runId };
}

interface StreamResponseOptions {
  accept: string | null;
  /** Another framing than the two Accept chooses from (OpenAI's chat-completion chunks). */
  encoder?: StreamEncoder;
  afterSeq?: number;
  keepAliveMs: number;
  onDisconnect?: () => void;
  ending?: StreamEnding;
  headers?: Record<string, string>;
}

/**
 * A run's stream as an HTTP response, in the format the client's Accept asks for: the events after
 * `afterSeq` from the hub, then live ones to the final event, with keep-alive comments.
 */
export function streamResponse(hub: StreamHub, runId: string, options: StreamResponseOptions): Response {
  return eventsResponse(runId, (signal) => hub.followBatches(runId, options.afterSeq ?? 0, signal), options);
}

/**
 * A run's events from `source` as a streamed HTTP response, as `streamResponse` sends a hub's: the
 * head at once (X-Run-ID), keep-alive comments while nothing comes, `onDisconnect` when the client
 * goes. A run that is not streamed through the hub (a text run answered in a stream's format) gives
 * its events when it ends.
 */
export function eventsResponse(runId: string, source: EventSource, options: StreamResponseOptions): Response {
  const encoder = options.encoder ?? encoderFor(chooseFormat(options.accept));
  const start = (sink: EventSink, signal: AbortSignal) =>
    follow(source, options.afterSeq ?? 0, encoder, { keepAliveMs: options.keepAliveMs, ending: options.ending }, sink, signal);
  const response = new Response(eventStream(start, options.onDisconnect), { headers: { ...options.headers, ...streamHeaders(encoder.contentType, runId) } });
  // Written straight to the connection by the API's server: event by event, without the web stream.
  return writableDirectly(response, (res, status, headers) => {
    res.writeHead(status, headers);
    const stop = new AbortController();
    res.on("close", () => {
      if (res.writableFinished) return;
      stop.abort();
      options.onDisconnect?.();
    });
    // The head goes at once (X-Run-ID before the model's first token), as with the web stream.
    res.flushHeaders();
    // Past a full socket buffer, the next event waits for it to drain, or for the client to go.
    const drained = () => once(res, "drain", { signal: stop.signal }).then(done, done);
    start({ write: (text) => (res.write(text) ? undefined : drained()), close: () => res.end() }, stop.signal);
  });
}
