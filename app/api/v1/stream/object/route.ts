import { streamObjectRequest } from "@/lib/api/requests";
import { otherMethods, route } from "@/lib/http/route";
import { streamResponse } from "@/lib/http/stream-format";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Starts a streamed run and answers with its stream (the same one GET /runs/{id}/stream resumes). */
export const POST = route(async ({ request, runtime, runCaller, body }) => {
  const caller = await runCaller();
  const input = await body(streamObjectRequest);
  const cancelOnDisconnect = new URL(request.url).searchParams.get("cancelOnDisconnect") === "true";
  const { runId } = await runtime.runs.streamObject(caller, input);
  return streamResponse(runtime.hub, runId, {
    accept: request.headers.get("accept"),
    keepAliveMs: runtime.config.limits.streamKeepAliveMs,
    onDisconnect: () => runtime.runs.clientGone(runId, cancelOnDisconnect),
  });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
