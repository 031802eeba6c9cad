import "server-only";
import { GenserveError, isGenserveError } from "../errors";

/**
 * A run's deadline, enforced by a timer the run owns and clears — not by `AbortSignal.timeout`
 * composed with `AbortSignal.any`: on Node 20 such a composite signal can be collected before its
 * timeout fires (once a garbage collection ran in between, `AbortSignal.any([AbortSignal.timeout(ms)])`
 * never aborts), and a run waiting on a model that never answers then waits for good.
 *
 * `signal` aborts at the deadline (with `model_timeout`) or when any of `sources` aborts (with its
 * reason); `expired` rejects at the same moment, so a stage that does not listen to the signal is
 * still left behind at the deadline. `dispose` clears the timer and the listeners on `sources`
 * (a server's shutdown signal outlives every run). Everything here is held strongly by the run.
 */
export class RunDeadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly unlink: (() => void)[] = [];
  /** Rejects with the abort's reason when the deadline passes or a source aborts; never resolves. */
  readonly expired: Promise<never>;

  constructor(timeoutMs: number, sources: readonly (AbortSignal | undefined)[] = []) {
    let reject!: (reason: unknown) => void;
    this.expired = new Promise<never>((_, r) => (reject = r));
    // Nobody has to be waiting on it: an unobserved rejection is not an error.
    this.expired.catch(() => undefined);
    this.controller.signal.addEventListener("abort", () => reject(this.controller.signal.reason), { once: true });
    this.timer = setTimeout(
      () => this.controller.abort(new GenserveError("model_timeout", { detail: `The run did not finish within its workflow's deadline (timeoutMs: ${timeoutMs}).` })),
      timeoutMs,
    );
    for (const source of sources) {
      if (!source) continue;
      if (source.aborted) {
        this.controller.abort(ownCopy(source.reason));
        break;
      }
      // Each run its own copy of a shared reason (one shutdown error for every run): the run's id is set on it.
      const forward = () => this.controller.abort(ownCopy(source.reason));
      source.addEventListener("abort", forward, { once: true });
      this.unlink.push(() => source.removeEventListener("abort", forward));
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Runs `work` with the signal, settling no later than the deadline (or a source's abort). */
  race<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const working = work(this.signal);
    // Work left behind at the deadline may still fail later; that is no longer anyone's error.
    working.catch(() => undefined);
    return Promise.race([working, this.expired]);
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const unlink of this.unlink.splice(0)) unlink();
  }
}

/**
 * A signal that aborts when `parent` does or when `abort` is called, held strongly by its caller
 * (what `AbortSignal.any` does, without the weak references that let it be collected on Node 20).
 * `dispose` removes the listener from the parent.
 */
export function childSignal(parent: AbortSignal): { signal: AbortSignal; abort(reason?: unknown): void; dispose(): void } {
  const controller = new AbortController();
  const forward = () => controller.abort(parent.reason);
  if (parent.aborted) controller.abort(parent.reason);
  else parent.addEventListener("abort", forward, { once: true });
  return {
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    dispose: () => parent.removeEventListener("abort", forward),
  };
}

/** A GenserveError as a new instance (a run records its id on it); anything else as it is. */
function ownCopy(reason: unknown): unknown {
  if (!isGenserveError(reason)) return reason;
  return new GenserveError(reason.code, {
    detail: reason.detail,
    errors: reason.errors,
    retryable: reason.retryable,
    headers: reason.headers,
    upstreamStatus: reason.upstreamStatus,
    retryAfterMs: reason.retryAfterMs,
    extensions: reason.extensions,
    cause: reason.cause,
  });
}
