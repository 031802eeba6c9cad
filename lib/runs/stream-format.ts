import type { ProblemBody } from "../store/types";
import type { RunMetadata } from "../api/requests";

export type StreamFormat = "sse" | "ndjson";

export interface DonePayload {
  runId: string;
  object: unknown;
  metadata: RunMetadata;
}

/**
 * Framing of stream/object. SSE: data items are default events with a sequence `id:`; the final
 * event is `event: done` or `event: error`; `event: restart` tells clients to discard what they had.
 * NDJSON: one JSON value per line, the same items, and `{"type":"done"|"error"|"restart",...}`.
 */
export interface StreamEncoder {
  readonly contentType: string;
  item(seq: number, text: string): string;
  restart(attempt: number): string;
  done(payload: DonePayload): string;
  error(problem: ProblemBody): string;
  /** A keep-alive line, or null where the format has none. */
  ping(): string | null;
}

const itemJson = (text: string) => JSON.stringify({ type: "object", object: { text } });

export const sseEncoder: StreamEncoder = {
  contentType: "text/event-stream; charset=utf-8",
  item: (seq, text) => `id: ${seq}\ndata: ${itemJson(text)}\n\n`,
  restart: (attempt) => `event: restart\ndata: ${JSON.stringify({ type: "restart", attempt })}\n\n`,
  done: (payload) => `event: done\ndata: ${JSON.stringify(payload)}\n\n`,
  error: (problem) => `event: error\ndata: ${JSON.stringify(problem)}\n\n`,
  ping: () => ": ping\n\n",
};

export const ndjsonEncoder: StreamEncoder = {
  contentType: "application/x-ndjson; charset=utf-8",
  item: (_seq, text) => `${itemJson(text)}\n`,
  restart: (attempt) => `${JSON.stringify({ type: "restart", attempt })}\n`,
  done: (payload) => `${JSON.stringify({ type: "done", ...payload })}\n`,
  // The problem body has a "type" of its own (its URI), so it travels under "error".
  error: (problem) => `${JSON.stringify({ type: "error", error: problem })}\n`,
  ping: () => null,
};

/** NDJSON when the client asks for it in Accept; SSE otherwise. */
export function chooseFormat(accept: string | null): StreamFormat {
  return accept && /application\/x-ndjson/i.test(accept) ? "ndjson" : "sse";
}
