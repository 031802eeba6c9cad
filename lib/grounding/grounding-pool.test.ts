import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { GroundingPool } from "./grounding-pool";

const file = fileURLToPath(new URL("./grounding-worker.mjs", import.meta.url));
const pools: GroundingPool[] = [];
const pool = (work: number) => {
  const p = new GroundingPool(file, { size: 1, budget: { timeMs: 60_000, work }, memoryMb: 256 });
  pools.push(p);
  return p;
};
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe("GroundingPool", () => {
  it("aligns in a worker thread", async () => {
    const leaves = await pool(1_000_000).align({ total: 1234.5, note: "Thanks" }, [{ source: { attachment: 0 }, text: "Total: 1.234,50 €" }]);
    expect(leaves).toEqual([
      { pointer: "/total", match: "normalized", source: { attachment: 0 }, start: 7, end: 15, text: "1.234,50" },
      { pointer: "/note", match: "none", reason: "not_found" },
    ]);
  });

  it("reports the leaves past the work budget as budget", async () => {
    const leaves = await pool(1).align({ a: "one", b: "two" }, [{ source: "input", text: "one two" }]);
    expect(leaves[1]).toEqual({ pointer: "/b", match: "none", reason: "budget" });
  });
});
