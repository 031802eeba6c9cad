/**
 * Reads a text/event-stream body (the WHATWG Server-Sent Events format genserve's streams use) into
 * its events, without EventSource (which cannot send headers) or any package: lines split on CR,
 * LF or CRLF, `:` comments (keep-alive pings) skipped, `data:` lines joined. Browser-safe.
 */

export interface ServerEvent {
  /** The event's `id:` field, when it had one. */
  id?: string;
  /** The event's type: "message" when it named none. */
  event: string;
  data: string;
}

/** The events of an SSE body, in order; ends when the body ends (a partial last event is dropped). */
export async function* readServerEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  let event = "";
  let id: string | undefined;
  let pendingCR = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      const ready: ServerEvent[] = [];
      let start = 0;
      for (let i = 0; i < buffer.length; i++) {
        const c = buffer[i];
        if (c !== "\n" && c !== "\r") continue;
        if (c === "\n" && pendingCR && i === start) {
          // The LF of a CRLF whose CR ended the previous line.
          pendingCR = false;
          start = i + 1;
          continue;
        }
        pendingCR = c === "\r";
        const line = buffer.slice(start, i);
        start = i + 1;
        if (line === "") {
          if (data.length > 0) ready.push({ ...(id !== undefined && { id }), event: event || "message", data: data.join("\n") });
          data = [];
          event = "";
          id = undefined;
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        let val = colon === -1 ? "" : line.slice(colon + 1);
        if (val.startsWith(" ")) val = val.slice(1);
        if (field === "data") data.push(val);
        else if (field === "event") event = val;
        else if (field === "id" && !val.includes("\0")) id = val;
      }
      buffer = buffer.slice(start);
      for (const item of ready) yield item;
    }
  } finally {
    reader.releaseLock();
    // Let the connection go when the reader stops early (aborted or broken off).
    body.cancel().catch(() => undefined);
  }
}
