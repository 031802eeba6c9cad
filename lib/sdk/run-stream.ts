/**
 * A streamed run's events, followed to the end across dropped connections: when the body breaks
 * off (or ends without a final event) the client asks `GET /api/v1/runs/{id}/stream` for the
 * events after the last id it received (`Last-Event-ID`), so the caller sees every event once, in
 * order. Events are numbered by the server; one at or below the last seen is dropped, never
 * repeated. Browser-safe.
 */
import { errorFromProblem, GenserveApiError, GenserveConnectionError, type ProblemDetails } from "./api-error";
import { readServerEvents } from "./event-stream-reader";
import { pathOf, type RunMetadata } from "./operations";
import { pause, type Transport } from "./transport";

/** One event of a streamed run, as the wire has it. */
export type RunStreamEvent =
  /** The next piece of the generated JSON text. */
  | { type: "item"; id: number; text: string }
  /** A retry began: what came before is void. */
  | { type: "restart"; id: number; attempt: number }
  /** The run succeeded: the validated object. */
  | { type: "done"; id: number; runId: string; object: unknown; metadata: RunMetadata };

export interface FollowOptions {
  signal?: AbortSignal;
  /** Reconnections in a row that may fail before the stream gives up (default 8). */
  maxReconnects?: number;
  /** Told of each reconnection (after a drop), with the last event id received. */
  onReconnect?: (lastEventId: number) => void;
}

const ACCEPT = { Accept: "text/event-stream" };

/**
 * Opens a stream with `open` (which answers with the run's first response) and follows the run to
 * its final event. Resolves once the response head arrived (the run id is known); `events` then
 * yields the run's events and throws the run's error as a typed error.
 */
export async function followRun(transport: Transport, open: () => Promise<Response>, options: FollowOptions = {}): Promise<{ runId: string; events: AsyncGenerator<RunStreamEvent> }> {
  const first = await open();
  const runId = first.headers.get("x-run-id") ?? "";
  return { runId, events: events(transport, runId, first, options) };
}

async function* events(transport: Transport, runId: string, first: Response, options: FollowOptions): AsyncGenerator<RunStreamEvent> {
  const { signal } = options;
  const maxReconnects = options.maxReconnects ?? 8;
  let lastId = 0;
  let response: Response | null = first;
  let failures = 0;
  for (;;) {
    if (response) {
      try {
        for await (const event of readServerEvents(response.body!)) {
          const id = event.id === undefined ? lastId + 1 : Number(event.id);
          // Already delivered (a resumed stream starts after Last-Event-ID; this guards the rest).
          if (event.id !== undefined && id <= lastId) continue;
          lastId = id;
          failures = 0;
          const data = JSON.parse(event.data) as Record<string, unknown>;
          if (event.event === "message") yield { type: "item", id, text: (data.object as { text: string }).text };
          else if (event.event === "restart") yield { type: "restart", id, attempt: Number(data.attempt) };
          else if (event.event === "done") {
            yield { type: "done", id, runId: String(data.runId ?? runId), object: data.object, metadata: data.metadata as RunMetadata };
            return;
          } else if (event.event === "error") {
            const problem = data as ProblemDetails;
            throw errorFromProblem(Number(problem.status ?? 500), { runId, ...problem });
          }
        }
      } catch (error) {
        if (error instanceof GenserveApiError) throw error;
        if (signal?.aborted) throw signal.reason;
        // The connection broke off: resume below.
      }
    }
    if (signal?.aborted) throw signal.reason;
    if (!runId) throw new GenserveConnectionError("The stream broke off before the run's id arrived; it cannot be resumed.");
    if (failures >= maxReconnects) throw new GenserveConnectionError(`The stream of run ${runId} broke off and could not be resumed after ${maxReconnects} attempts.`);
    if (failures > 0) await pause(Math.min(5_000, 100 * 2 ** failures), signal);
    failures++;
    options.onReconnect?.(lastId);
    try {
      response = await transport.sendOnce("GET", pathOf("resumeStream", runId), { headers: { ...ACCEPT, "Last-Event-ID": String(lastId) }, signal });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof GenserveApiError && !error.retryable) throw error;
      response = null;
    }
  }
}

export const STREAM_ACCEPT = ACCEPT;
