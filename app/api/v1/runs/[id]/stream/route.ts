import { GenserveError, validationError } from "@/lib/errors";
import { otherMethods, route } from "@/lib/http/route";
import { toProblem } from "@/lib/http/problem";
import { runView } from "@/lib/runs/run-view";
import { chooseFormat, encoderFor, eventStream } from "@/lib/runs/stream-format";
import type { StreamEvent } from "@/lib/runs/stream-hub";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const headers = (contentType: string, runId: string) => ({
  "Content-Type": contentType,
  "Cache-Control": "no-cache, no-transform",
  "X-Accel-Buffering": "no",
  "X-Run-ID": runId,
});

/** Resumes a streamed run: replays the events after Last-Event-ID, then follows it to its end. */
export const GET = route<{ id: string }>(async ({ request, runtime, principal, params }) => {
  const caller = await principal();
  const run = await runtime.store.runs.get(params.id);
  if (!run || run.operation !== "stream.object" || (!caller.admin && run.keyId !== caller.keyId)) {
    throw new GenserveError("run_not_found", { detail: `No streamed run "${params.id}" exists for this key.` });
  }
  const url = new URL(request.url);
  const lastEventId = request.headers.get("last-event-id") ?? url.searchParams.get("lastEventId") ?? "0";
  if (!/^\d{1,9}$/.test(lastEventId)) throw validationError([{ path: "Last-Event-ID", message: "must be the id of an event this stream sent" }]);
  const encoder = encoderFor(chooseFormat(request.headers.get("accept")));

  if (runtime.hub.owner(run.id) !== null) {
    const stream = eventStream(runtime.hub, run.id, Number(lastEventId), encoder, { keepAliveMs: runtime.config.limits.streamKeepAliveMs });
    return new Response(stream, { headers: headers(encoder.contentType, run.id) });
  }
  if (run.status === "running") {
    throw new GenserveError("stream_unavailable", { detail: "This run is streamed by another server process; resume there, or read the run when it ends." });
  }
  // The items are no longer kept: the stored outcome still ends the stream honestly.
  const view = runView(run);
  const final: StreamEvent =
    run.status === "succeeded"
      ? { seq: 0, kind: "done", payload: { runId: run.id, object: run.output, metadata: view.metadata } }
      : { seq: 0, kind: "error", problem: run.error ?? toProblem(new GenserveError("internal", { runId: run.id })) };
  const text = encoder.encode(final).replace(/^id: 0\n/, "");
  return new Response(text, { headers: headers(encoder.contentType, run.id) });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
