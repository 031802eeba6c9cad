import { createParser, type EventSourceMessage } from "eventsource-parser";

/** Reads a whole SSE response with a real SSE parser. */
export async function readSse(response: Response): Promise<{ events: EventSourceMessage[]; comments: string[] }> {
  const events: EventSourceMessage[] = [];
  const comments: string[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e), onComment: (c) => comments.push(c) });
  const decoder = new TextDecoder();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
  return { events, comments };
}

/** Reads a whole NDJSON response. */
export async function readNdjson(response: Response): Promise<Record<string, unknown>[]> {
  const text = await response.text();
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

export function streamRequest(url: string, key: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}/api/v1/stream/object`, {
    method: "POST",
    headers: { "content-type": "application/json", "api-key": key, ...headers },
    body: JSON.stringify(body),
  });
}
