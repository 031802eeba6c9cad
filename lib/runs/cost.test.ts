import { describe, expect, it } from "vitest";
import { computeCost } from "./cost";

describe("computeCost", () => {
  it("is exact for the usual prices", () => {
    // 100 × 0.15 + 50 × 0.60 = 45 micro-dollars
    expect(computeCost({ inputTokens: 100, outputTokens: 50 }, { input: 0.15, output: 0.6 })).toBe("0.000045");
    expect(computeCost({ inputTokens: 37, outputTokens: 0 }, { input: 1.5, output: 0 })).toBe("0.0000555");
    expect(computeCost({ inputTokens: 1_000_000, outputTokens: 2_000_000 }, { input: 3, output: 15 })).toBe("33");
  });

  it("is 0 without prices", () => {
    expect(computeCost({ inputTokens: 12345, outputTokens: 678 }, { input: 0, output: 0 })).toBe("0");
  });

  it("handles prices written in exponent notation", () => {
    expect(computeCost({ inputTokens: 10, outputTokens: 0 }, { input: 1e-7, output: 0 })).toBe("0.000000000001");
  });
});
