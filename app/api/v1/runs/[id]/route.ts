import { runDetailSchema } from "@/lib/api/responses";
import { reply } from "@/lib/http/problem";
import { otherMethods, route } from "@/lib/http/route";
import { readableRun } from "@/lib/http/runs";
import { maskUrl, runView } from "@/lib/http/run-view";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = route<{ id: string }>(async ({ runtime, principal, params }) => {
  const run = await readableRun(runtime.store, await principal(), params.id);
  const event = await runtime.store.events.forRun(run.id);
  return reply(runDetailSchema, {
    ...runView(run),
    deliveries: event
      ? { eventId: event.id, url: maskUrl(event.url), status: event.status, attempts: event.attempts, nextAttemptAt: event.nextAttemptAt, log: event.deliveries }
      : null,
  });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
