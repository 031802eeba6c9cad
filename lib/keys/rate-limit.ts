import "server-only";
import { LRUCache } from "lru-cache";
import { GenserveError } from "../errors";

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * Per-key token bucket for run operations: `perMinute` runs per minute on average, bursts up to the
 * same number. In-process: with several replicas each enforces its own share.
 */
export class RateLimiter {
  private readonly buckets = new LRUCache<string, Bucket>({ max: 10_000 });

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes one token for `keyId` or throws 429 with Retry-After. A limit of 0 disables limiting. */
  take(keyId: string): void {
    if (this.perMinute <= 0) return;
    const now = this.now();
    const ratePerMs = this.perMinute / 60_000;
    const bucket = this.buckets.get(keyId) ?? { tokens: this.perMinute, updatedAt: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.updatedAt) * ratePerMs);
    bucket.updatedAt = now;
    if (bucket.tokens < 1) {
      this.buckets.set(keyId, bucket);
      const retryAfter = Math.ceil((1 - bucket.tokens) / ratePerMs / 1000);
      throw new GenserveError("rate_limited", {
        detail: `This key may start ${this.perMinute} runs per minute (limits.runsPerMinute); retry in ${retryAfter} s.`,
        headers: { "Retry-After": String(retryAfter) },
      });
    }
    bucket.tokens -= 1;
    this.buckets.set(keyId, bucket);
  }
}
