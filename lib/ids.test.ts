import { describe, expect, it } from "vitest";
import { newRunId } from "./ids";

describe("run ids", () => {
  it("are ULIDs that sort by creation, random in their last 16 characters", () => {
    const ids = Array.from({ length: 5_000 }, () => newRunId());
    for (const id of ids) expect(id).toMatch(/^run_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    // Every character of Crockford's base32 turns up in the random parts, and ids minted 1,000
    // apart differ there: a broken source (constant, or few bits) would not do that.
    const firsts = new Set(ids.map((id) => id.slice(4 + 10, 4 + 11)));
    const seeds = new Set(ids.filter((_, i) => i % 1_000 === 0).map((id) => id.slice(4 + 10)));
    expect(seeds.size).toBe(5);
    const all = new Set(ids.flatMap((id) => [...id.slice(4 + 10)]));
    expect(all.size).toBe(32);
    expect(firsts.size).toBeGreaterThan(1);
  });
});
