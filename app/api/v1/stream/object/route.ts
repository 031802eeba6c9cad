import { streamObjectRequest } from "@/lib/api/requests";
import { otherMethods, quotaHeaders, route } from "@/lib/http/route";
import { streamResponse } from "@/lib/http/stream-format";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Starts a streamed run and answers with its stream (the same one GET /runs/{id}/stream resumes). */
export const POST = route(async ({ request, runtime, principal, body }) => {
  const caller = await principal();
  const input = await body(streamObjectRequest);
  const cancelOnDisconnect = new URL(request.url).searchParams.get("cancelOnDisconnect") === "true";
  const { runId, quota } = await runtime.runs.streamObject(caller, input, { traceparent: request.headers.get("traceparent") });
  return streamResponse(runtime.hub, runId, {
    accept: request.headers.get("accept"),
    keepAliveMs: runtime.config.limits.streamKeepAliveMs,
    onDisconnect: () => runtime.runs.clientGone(runId, cancelOnDisconnect),
    headers: quotaHeaders(quota),
  });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
