import "server-only";
import { replayRequest, replaySchema } from "../api/lifecycle";
import { runCancellationSchema } from "../api/responses";
import { GenserveError } from "../errors";
import { mayRead } from "../keys/access";
import type { Principal } from "../keys/keys";
import { replayRun } from "../runs/replay";
import type { RunRecord, Store } from "../store/types";
import { reply } from "./problem";
import { route } from "./route";

/**
 * A run the caller may read (its own, or any for an admin key); another key's run is a 404 exactly
 * like a missing one. `streamed` asks for a stream.object run.
 */
export async function readableRun(store: Store, caller: Principal, id: string, options: { streamed?: boolean } = {}): Promise<RunRecord> {
  const run = await store.runs.get(id);
  if (!run || !mayRead(caller, run.keyId) || (options.streamed && run.operation !== "stream.object")) {
    throw new GenserveError("run_not_found", { detail: `No ${options.streamed ? "streamed run" : "run"} "${id}" exists for this key.` });
  }
  return run;
}

/** POST /api/v1/runs/{id}/replay `{workflowSlug?}`: the same request again, with the same bundle or on another version. */
export const replay = route<{ id: string }>(async ({ runtime, principal, params, body }) => {
  const caller = await principal();
  const original = await readableRun(runtime.store, caller, params.id);
  const input = await body(replayRequest, { optional: true });
  const result = await replayRun({ catalog: runtime.catalog, runs: runtime.runs }, caller, original, input);
  return reply(replaySchema, result, { status: 201, headers: { Location: `/api/v1/runs/${result.runId}`, "X-Run-ID": result.runId } });
});

/**
 * POST /api/v1/runs/{id}/cancel: stops a queued or running run the caller may read (another key's
 * run is a 404, as for GET); 200 once it ended cancelled, 202 while it is being stopped elsewhere.
 */
export const cancelRun = route<{ id: string }>(async ({ runtime, principal, params }) => {
  const run = await readableRun(runtime.store, await principal(), params.id);
  const result = await runtime.runs.cancel(run);
  return reply(runCancellationSchema, result, { status: result.status === "running" || result.status === "queued" ? 202 : 200 });
});
