import "server-only";
import type { IdempotencyRecord, Store } from "../store/store-types";

/** How long a key's Idempotency-Key answers repeats with its first response. */
const WINDOW_MS = 24 * 60 * 60 * 1000;

/** The first responses of requests sent with an `Idempotency-Key`, per API key, for 24 hours. */
export class IdempotencyLedger {
  constructor(private readonly store: Store) {}

  /** Reserves the key for this request; the existing record when the key was used within the window. */
  begin(keyId: string, key: string, requestHash: string): Promise<IdempotencyRecord | null> {
    return this.store.idempotency.begin(keyId, key, requestHash, new Date().toISOString(), WINDOW_MS);
  }

  complete(keyId: string, key: string, result: { runId: string | null; status: number; body: string }): Promise<void> {
    return this.store.idempotency.complete(keyId, key, result);
  }

  /** Forgets a reservation whose request never started a run. */
  release(keyId: string, key: string): Promise<void> {
    return this.store.idempotency.release(keyId, key);
  }
}
