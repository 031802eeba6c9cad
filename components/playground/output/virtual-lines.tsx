"use client";

import { useLayoutEffect, useRef, useState, type CSSProperties, type ReactNode } from "react";
import { MAX_VISIBLE_ROWS, ROW_HEIGHT, rowWindow } from "./row-window";

export { ROW_HEIGHT } from "./row-window";

/** One style object for every row (React compares it once, not property by property per row). */
const ROW_STYLE: CSSProperties = { height: ROW_HEIGHT };
/**
 * The scrolling box of a long list is sized by the page, never by its rows: laying out a new
 * batch of rows stays inside it (the composer beside it is not laid out again), and so does paint.
 */
const BOX_STYLE: CSSProperties = { contain: "strict" };

interface Props {
  count: number;
  /** Changes whenever rows change (the document's version): the list redraws what is on screen. */
  version: number;
  /**
   * Row `index`'s content. Rows that have not changed should be the same element (a cache by
   * line): React then skips them, and a batch costs only the rows it added or changed.
   */
  row(index: number): ReactNode;
  /** The document is growing: start at its end and stay there, unless the reader scrolls away (back to the end resumes it). */
  follow: boolean;
  className?: string;
  "data-testid"?: string;
}

/**
 * A long list of fixed-height rows of which only those on screen (and a margin) are in the DOM:
 * a 20,000-line document costs what 60 lines do to draw. While `follow` is on, the view keeps to
 * the end as rows are added, until the reader scrolls up; scrolling back to the end resumes it.
 * Following costs no read of the page's layout: where the end is comes from the row count, and the
 * box is only told to scroll there (one write per drawn batch, and no second render).
 */
export function VirtualLines({ count, version, row, follow, className = "", ...rest }: Props) {
  const box = useRef<HTMLDivElement>(null);
  // Kept to the end (`pinned`): from the start while the document grows, then for as long as the reader stays there.
  const [scroll, setScroll] = useState({ top: 0, pinned: follow });
  const [height, setHeight] = useState(MAX_VISIBLE_ROWS * ROW_HEIGHT);
  const bounded = count > MAX_VISIBLE_ROWS;
  const pinned = scroll.pinned && bounded;
  const { first, last } = rowWindow(count, scroll.top, height, pinned, bounded);

  useLayoutEffect(() => {
    // The last rows of a finished stream land with its final update: still followed if pinned. The
    // box is told to go past its end (it stops there), so no height needs to be known, nor read.
    if (pinned && box.current) box.current.scrollTop = count * ROW_HEIGHT;
  }, [pinned, count, version]);

  useLayoutEffect(() => {
    const el = box.current;
    if (!el || typeof ResizeObserver === "undefined") return;
    // Only the scrolling box's height counts (a short list's box is as tall as its rows: that says
    // nothing of the window a long one will have).
    const observer = new ResizeObserver(([entry]) => {
      const measured = Math.round(entry?.contentRect.height ?? 0);
      if (measured > 0 && el.style.contain === "strict") setHeight(measured);
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  const rows: ReactNode[] = [];
  for (let i = first; i < last; i++) {
    rows.push(
      <div key={i} style={ROW_STYLE} className="flex whitespace-pre">
        {row(i)}
      </div>,
    );
  }
  return (
    <div
      ref={box}
      className={`font-mono text-sm leading-5 ${bounded ? "h-[min(70vh,36rem)] overflow-auto" : "overflow-x-auto"} ${className}`}
      style={bounded ? BOX_STYLE : undefined}
      onScroll={(e) => {
        // Read in a scroll event, after the frame's layout: nothing is laid out again to answer it.
        const el = e.currentTarget;
        const atEnd = el.scrollTop + el.clientHeight >= el.scrollHeight - ROW_HEIGHT * 2;
        // Following, the window is worked out from the count: the scroll our own write caused needs no render.
        if (atEnd && scroll.pinned) return;
        setScroll({ top: el.scrollTop, pinned: atEnd });
      }}
      {...rest}
    >
      <div className="w-max min-w-full" style={{ boxSizing: "border-box", height: count * ROW_HEIGHT, paddingTop: first * ROW_HEIGHT }}>
        {rows}
      </div>
    </div>
  );
}
