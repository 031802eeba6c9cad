import { GenserveError, toProblem, validationError } from "@/lib/errors";
import { otherMethods, route } from "@/lib/http/route";
import { readableRun } from "@/lib/http/runs";
import { runView } from "@/lib/http/run-view";
import { chooseFormat, encoderFor, streamHeaders, streamResponse } from "@/lib/http/stream-format";
import type { StreamEvent } from "@/lib/runs/stream-hub";
import type { RunRecord } from "@/lib/store/types";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** The final event of a run that ended, from its record (its streamed items are no longer at hand). */
function finalFromRecord(run: RunRecord): StreamEvent {
  return run.status === "succeeded"
    ? { seq: 0, kind: "done", payload: { runId: run.id, object: run.output, metadata: runView(run).metadata } }
    : { seq: 0, kind: "error", problem: run.error ?? toProblem(new GenserveError("internal", { runId: run.id })) };
}

/**
 * Resumes a streamed run: replays the events after Last-Event-ID, then follows it to its end — from
 * this process's memory when it runs the stream, else (PostgreSQL) from the events the streaming
 * replica shares through the database.
 */
export const GET = route<{ id: string }>(async ({ request, runtime, principal, params }) => {
  const run = await readableRun(runtime.store, await principal(), params.id, { streamed: true });
  const url = new URL(request.url);
  const lastEventId = request.headers.get("last-event-id") ?? url.searchParams.get("lastEventId") ?? "0";
  if (!/^\d{1,9}$/.test(lastEventId)) throw validationError([{ path: "Last-Event-ID", message: "must be the id of an event this stream sent" }]);
  const accept = request.headers.get("accept");

  if (runtime.hub.holds(run.id) || runtime.hub.followsOthers) {
    return streamResponse(runtime.hub, run.id, {
      accept,
      afterSeq: Number(lastEventId),
      keepAliveMs: runtime.config.limits.streamKeepAliveMs,
      // Events ran out without a final one: the run ended elsewhere (or its events expired).
      ending: async () => {
        const latest = await runtime.store.runs.get(run.id);
        return latest && latest.status !== "running" && latest.status !== "queued" ? finalFromRecord(latest) : null;
      },
    });
  }
  if (run.status === "running") {
    throw new GenserveError("stream_unavailable", { detail: "This run is streamed by another server process; resume there, or read the run when it ends." });
  }
  // The items are no longer kept: the stored outcome still ends the stream honestly.
  const text = encoderFor(chooseFormat(accept)).encode(finalFromRecord(run)).replace(/^id: 0\n/, "");
  return new Response(text, { headers: streamHeaders(encoderFor(chooseFormat(accept)).contentType, run.id) });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
