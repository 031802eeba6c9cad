import "server-only";
import type { ServerResponse } from "node:http";

/** Writes a response's status, headers (as given) and body straight to a Node response. */
export type DirectWriter = (res: ServerResponse, status: number, headers: Record<string, string>) => void;

const writers = new WeakMap<Response, DirectWriter>();

/**
 * Marks a response as one the API's server may write straight to the connection with `writer`
 * (lib/cli/api-routes.ts) instead of reading its web stream back: a JSON body as its text, a run's
 * stream event by event. Other servers (Next.js in development) read the response as usual.
 */
export function writableDirectly(response: Response, writer: DirectWriter): Response {
  writers.set(response, writer);
  return response;
}

/** How to write `response` directly, while its body is still unread; undefined for any other response. */
export function directWriterOf(response: Response): DirectWriter | undefined {
  return response.bodyUsed ? undefined : writers.get(response);
}
