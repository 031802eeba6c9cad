import { describe, expect, it } from "vitest";
import { PaceRecorder } from "./pace";

describe("PaceRecorder", () => {
  it("keeps a point every 40 ms and the newest mark last", () => {
    const pace = new PaceRecorder();
    for (let ms = 0; ms <= 200; ms += 10) pace.mark(ms, ms * 2);
    expect(pace.points()).toEqual([[0, 0], [40, 80], [80, 160], [120, 240], [160, 320], [200, 400]]);
    pace.mark(215, 430);
    expect(pace.points().at(-1)).toEqual([215, 430]);
  });

  it("stays bounded over an hour-long stream, in order, from its first mark to its last", () => {
    const pace = new PaceRecorder();
    for (let ms = 0; ms <= 3_600_000; ms += 5) pace.mark(ms, ms / 5);
    const points = pace.points();
    expect(points.length).toBeLessThanOrEqual(258);
    expect(points.length).toBeGreaterThan(100);
    expect(points[0]).toEqual([0, 0]);
    expect(points.at(-1)).toEqual([3_600_000, 720_000]);
    expect(points.every(([t, n], i) => i === 0 || (t > points[i - 1]![0] && n > points[i - 1]![1]))).toBe(true);
    // The shape survives: the points spread over the whole hour, not bunched at its start.
    expect(points[Math.floor(points.length / 2)]![0]).toBeGreaterThan(1_200_000);
  });
});
