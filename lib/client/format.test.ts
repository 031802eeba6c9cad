import { describe, expect, it } from "vitest";
import { formatAgo, formatDuration, formatUsd } from "./format";

describe("formats", () => {
  it("shows durations in the unit read at a glance", () => {
    expect([0, 364.4, 999.6, 1_621, 9_994, 12_345, 59_949, 125_000].map(formatDuration)).toEqual(["0 ms", "364 ms", "1000 ms", "1.62 s", "9.99 s", "12.3 s", "59.9 s", "2 min 5 s"]);
    expect([null, undefined, Number.NaN].map(formatDuration)).toEqual(["—", "—", "—"]);
  });

  it("shows dollar amounts with their sign and every digit", () => {
    expect(["0.0000555", "12", "-0.25", "", null].map(formatUsd)).toEqual(["$0.0000555", "$12", "-$0.25", "—", "—"]);
  });

  it("says how long ago a run started", () => {
    const now = Date.parse("2026-11-24T12:00:00Z");
    const ago = (seconds: number) => formatAgo(new Date(now - seconds * 1_000).toISOString(), now);
    expect([0, 44, 50, 59 * 60, 2 * 3_600, 23 * 3_600, 3 * 86_400].map(ago)).toEqual(["just now", "just now", "1 min ago", "59 min ago", "2 h ago", "23 h ago", "3 d ago"]);
    expect(formatAgo("not a date", now)).toBe("—");
  });
});
