import "server-only";
import { GenserveError } from "../errors";
import { mayRead } from "../keys/access";
import type { Principal } from "../keys/keys";
import type { RunRecord, Store } from "../store/types";

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
