import { GenserveError } from "@/lib/errors";
import { redeliveryResponse } from "@/lib/api/responses";
import { reply } from "@/lib/http/problem";
import { otherMethods, route } from "@/lib/http/route";
import { readableRun } from "@/lib/http/runs";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Sends the run's callback event again (same webhook-id, so receivers can deduplicate). */
export const POST = route<{ id: string }>(async ({ runtime, principal, params }) => {
  const run = await readableRun(runtime.store, await principal(), params.id);
  const event = await runtime.store.events.forRun(run.id);
  if (!event) throw new GenserveError("not_found", { detail: "This run has no callback event (it is still running, or it is a streamed run)." });
  await runtime.store.events.redeliver(event.id, new Date().toISOString());
  runtime.delivery.kick();
  return reply(redeliveryResponse, { eventId: event.id, status: "pending" }, { status: 202 });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
