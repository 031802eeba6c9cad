import { streamObjectRequest } from "@/lib/api/requests";
import { validationError } from "@/lib/errors";
import { otherMethods, route } from "@/lib/http/route";
import { chooseFormat } from "@/lib/runs/stream-format";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = route(async ({ request, runtime, runCaller, body }) => {
  const caller = await runCaller();
  const input = await body(streamObjectRequest);
  if (input.workflowSlug === undefined && input.threadId === undefined) {
    throw validationError([
      { path: "/workflowSlug", message: "is required when threadId is absent" },
      { path: "/threadId", message: "is required when workflowSlug is absent" },
    ]);
  }
  const cancelOnDisconnect = new URL(request.url).searchParams.get("cancelOnDisconnect") === "true";
  const started = await runtime.runs.streamObject(caller, input, { format: chooseFormat(request.headers.get("accept")), cancelOnDisconnect });
  return new Response(started.stream, {
    headers: {
      "Content-Type": started.contentType,
      "Cache-Control": "no-cache, no-transform",
      "X-Accel-Buffering": "no",
      "X-Run-ID": started.runId,
    },
  });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
