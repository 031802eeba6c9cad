import { describe, expect, it } from "vitest";
import { RateLimiter } from "./rate-limit";

describe("RateLimiter", () => {
  it("allows a burst of the per-minute limit, then refuses with Retry-After, then refills", () => {
    let now = 0;
    const limiter = new RateLimiter(3, () => now);
    for (let i = 0; i < 3; i++) limiter.take("k");
    expect(() => limiter.take("k")).toThrow(expect.objectContaining({ code: "rate_limited", headers: { "Retry-After": "20" } }));
    limiter.take("other"); // buckets are per key
    now += 20_000;
    limiter.take("k");
    expect(() => limiter.take("k")).toThrow();
  });

  it("is off at 0", () => {
    const limiter = new RateLimiter(0);
    for (let i = 0; i < 1000; i++) limiter.take("k");
  });
});
