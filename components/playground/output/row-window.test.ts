import { describe, expect, it } from "vitest";
import { MAX_VISIBLE_ROWS, OVERSCAN, PINNED_OVERSCAN, ROW_HEIGHT, rowWindow } from "./row-window";

const HEIGHT = 600; // 30 rows on screen

describe("rowWindow", () => {
  it("draws a short list whole, wherever it is scrolled", () => {
    expect(rowWindow(MAX_VISIBLE_ROWS, 400, HEIGHT, false)).toEqual({ first: 0, last: MAX_VISIBLE_ROWS, top: 0 });
    expect(rowWindow(3, 0, HEIGHT, true)).toEqual({ first: 0, last: 3, top: 0 });
  });

  it("draws the rows on screen and the overscan on both sides", () => {
    const w = rowWindow(10_000, 100 * ROW_HEIGHT, HEIGHT, false);
    expect(w).toEqual({ first: 100 - OVERSCAN, last: 130 + OVERSCAN, top: 100 * ROW_HEIGHT });
  });

  it("keeps to the end while pinned, from the count alone, with a small overscan above", () => {
    const w = rowWindow(10_000, 0, HEIGHT, true);
    expect(w.top).toBe(10_000 * ROW_HEIGHT - HEIGHT);
    expect(w).toMatchObject({ first: 10_000 - 30 - PINNED_OVERSCAN, last: 10_000 });
    // The next batch moves it along with the document.
    expect(rowWindow(10_040, 0, HEIGHT, true)).toMatchObject({ first: 10_040 - 30 - PINNED_OVERSCAN, last: 10_040 });
  });

  it("never scrolls past either end when not pinned", () => {
    expect(rowWindow(100, -50, HEIGHT, false)).toEqual({ first: 0, last: 30 + OVERSCAN, top: 0 });
    expect(rowWindow(100, 1e9, HEIGHT, false)).toEqual({ first: 70 - OVERSCAN, last: 100, top: 100 * ROW_HEIGHT - HEIGHT });
  });
});
