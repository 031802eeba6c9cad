import { streamObjectRequest } from "@/lib/api/requests";
import { GenserveError, validationError } from "@/lib/errors";
import { route } from "@/lib/http/route";
import { chooseFormat } from "@/lib/runs/stream-format";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = route(async ({ request, runtime, runCaller, body }) => {
  const caller = await runCaller();
  const input = await body(streamObjectRequest);
  if (input.workflowSlug === undefined) {
    if (input.threadId === undefined) {
      throw validationError([
        { path: "/workflowSlug", message: "is required when threadId is absent" },
        { path: "/threadId", message: "is required when workflowSlug is absent" },
      ]);
    }
    // Threads are not stored yet, so a thread id alone can never name an existing thread.
    throw new GenserveError("thread_not_found", { detail: `No thread "${input.threadId}" exists.`, errors: [{ path: "/threadId", message: "unknown thread" }] });
  }
  const started = await runtime.runs.streamObject(caller, { ...input, workflowSlug: input.workflowSlug }, chooseFormat(request.headers.get("accept")));
  return new Response(started.stream, {
    headers: {
      "Content-Type": started.contentType,
      "Cache-Control": "no-cache, no-transform",
      "X-Accel-Buffering": "no",
      "X-Run-ID": started.runId,
    },
  });
});
