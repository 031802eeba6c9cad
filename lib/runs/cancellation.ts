import "server-only";
import type { Logger } from "pino";
import { GenserveError } from "../errors";
import type { Store } from "../store/store-types";
import { LAST_OUTPUT_CHARS } from "./attempt";

/** Why a run asked to stop (POST /api/v1/runs/{id}/cancel) ended. */
export const cancelRequested = () => new GenserveError("cancelled", { detail: "The run was cancelled (POST /api/v1/runs/{id}/cancel)." });

/** A cancel's problem with the streamed output so far (`lastOutput`), when there was any. */
export function withPartial(error: GenserveError, partial: string | undefined): GenserveError {
  if (error.code !== "cancelled" || !partial) return error;
  return new GenserveError("cancelled", { detail: error.detail, runId: error.runId, extensions: { ...error.extensions, lastOutput: partial.slice(0, LAST_OUTPUT_CHARS) } });
}

/**
 * The runs executing in this process that can be stopped, and how a cancel asked for anywhere
 * reaches them: a caller here stops one at once (`stop`); a cancel recorded by another process is
 * announced by the store (PostgreSQL NOTIFY: milliseconds), and each heartbeat also asks the store
 * (`check`), which bounds a lost announcement by the heartbeat's period.
 */
export class RunCancels {
  private readonly controllers = new Map<string, AbortController>();
  private listener: { close(): Promise<void> } | null = null;

  constructor(private readonly deps: { store: Store; logger: Logger }) {}

  /** A run starts executing here: its signal aborts when it is stopped. */
  register(id: string): AbortSignal {
    const controller = new AbortController();
    this.controllers.set(id, controller);
    return controller.signal;
  }

  release(id: string): void {
    this.controllers.delete(id);
  }

  has(id: string): boolean {
    return this.controllers.has(id);
  }

  /** Stops a run executing here with `reason`; false when it is not executing here. */
  stop(id: string, reason: GenserveError): boolean {
    const controller = this.controllers.get(id);
    if (!controller) return false;
    if (!controller.signal.aborted) {
      this.deps.logger.info({ runId: id, code: reason.code }, "stopping the run");
      controller.abort(reason);
    }
    return true;
  }

  /** Listens for cancels asked through any process. */
  async listen(): Promise<void> {
    if (this.listener) return;
    this.listener = await this.deps.store.runs.listenCancels(
      (id) => void this.stop(id, cancelRequested()),
      () => void this.check().catch(() => undefined),
    );
  }

  /** Stops the runs executing here whose cancel was recorded (by any process). */
  async check(): Promise<void> {
    if (this.controllers.size === 0) return;
    for (const id of await this.deps.store.runs.cancelRequested([...this.controllers.keys()])) this.stop(id, cancelRequested());
  }

  async close(): Promise<void> {
    await this.listener?.close();
    this.listener = null;
  }
}
