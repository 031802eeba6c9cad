/** Every row is this tall (text-sm, leading-5), so that which rows are on screen is arithmetic. */
export const ROW_HEIGHT = 20;
/** Above this many rows the list scrolls in a box of its own; below it shows whole. */
export const MAX_VISIBLE_ROWS = 30;
/** Rows drawn beyond each edge of the window, so a fast scroll does not show blank space. */
export const OVERSCAN = 30;
/**
 * Rows drawn above the window while it keeps to the end of a growing document: there each batch
 * moves the window down by the rows it added, so every row drawn is a row mounted; the reader is
 * not scrolling (scrolling up stops the following, and the full overscan applies again).
 */
export const PINNED_OVERSCAN = 5;

export interface RowWindow {
  /** The first row drawn and the one after the last. */
  first: number;
  last: number;
  /** Where the view is scrolled to, in pixels (the end, while pinned). */
  top: number;
}

/**
 * Which of `count` fixed-height rows are drawn in a view `height` pixels tall scrolled to `top`;
 * kept to the end (`pinned`), the end is worked out from the count alone: nothing is read from
 * the page's layout to follow a growing document. A short list (`bounded` false) is drawn whole.
 */
export function rowWindow(count: number, top: number, height: number, pinned: boolean, bounded = count > MAX_VISIBLE_ROWS): RowWindow {
  if (!bounded) return { first: 0, last: count, top: 0 };
  const end = Math.max(0, count * ROW_HEIGHT - height);
  const at = pinned ? end : Math.min(Math.max(0, top), end);
  const above = pinned ? PINNED_OVERSCAN : OVERSCAN;
  const first = Math.max(0, Math.floor(at / ROW_HEIGHT) - above);
  const last = Math.min(count, Math.ceil((at + height) / ROW_HEIGHT) + OVERSCAN);
  return { first, last, top: at };
}
