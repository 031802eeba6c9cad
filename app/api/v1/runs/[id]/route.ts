import { GenserveError } from "@/lib/errors";
import { json } from "@/lib/http/problem";
import { otherMethods, route } from "@/lib/http/route";
import { maskUrl, runView } from "@/lib/runs/run-view";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = route<{ id: string }>(async ({ runtime, principal, params }) => {
  const caller = await principal();
  const run = await runtime.store.runs.get(params.id);
  // Another key's run is indistinguishable from a missing one.
  if (!run || (!caller.admin && run.keyId !== caller.keyId)) {
    throw new GenserveError("run_not_found", { detail: `No run "${params.id}" exists for this key.` });
  }
  const event = await runtime.store.events.forRun(run.id);
  return json({
    ...runView(run),
    deliveries: event
      ? { eventId: event.id, url: maskUrl(event.url), status: event.status, attempts: event.attempts, nextAttemptAt: event.nextAttemptAt, log: event.deliveries }
      : null,
  });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
