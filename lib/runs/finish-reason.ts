import "server-only";

/**
 * Why the model stopped, as the run's metadata tells it. The providers' reasons are unified by the
 * model clients (`stop`, `length`, `content-filter`, …; lib/models/model-client.ts); a run's
 * metadata names one only when it is not the ordinary `stop`, as `warnings` name only what
 * happened, so that the metadata of an ordinary run is unchanged.
 */
export function finishNote(reason: string | undefined): { finishReason?: string } {
  return reason === undefined || reason === "stop" ? {} : { finishReason: reason };
}
