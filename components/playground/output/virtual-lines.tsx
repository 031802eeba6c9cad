"use client";

import { useLayoutEffect, useRef, useState, type ReactNode } from "react";

/** Every row is this tall (text-sm, leading-5), so that which rows are on screen is arithmetic. */
export const ROW_HEIGHT = 20;
/** Rows drawn beyond each edge of the window, so a fast scroll does not show blank space. */
const OVERSCAN = 30;
/** Above this many rows the list scrolls in a box of its own; below it shows whole. */
const MAX_VISIBLE_ROWS = 30;

interface Props {
  count: number;
  /** Changes whenever rows change (the document's version): the list redraws what is on screen. */
  version: number;
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
 */
export function VirtualLines({ count, version, row, follow, className = "", ...rest }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const [top, setTop] = useState(0);
  const [height, setHeight] = useState(MAX_VISIBLE_ROWS * ROW_HEIGHT);
  // Kept to the end: from the start while the document grows, then for as long as the reader stays there.
  const pinned = useRef(follow);
  const bounded = count > MAX_VISIBLE_ROWS;

  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    // The last rows of a finished stream land with its final update: still followed if pinned.
    if (pinned.current && bounded) {
      el.scrollTop = el.scrollHeight;
      setTop(el.scrollTop);
    }
  }, [version, count, bounded]);

  useLayoutEffect(() => {
    const el = box.current;
    if (!el || typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(() => setHeight(el.clientHeight || MAX_VISIBLE_ROWS * ROW_HEIGHT));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  const first = bounded ? Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN) : 0;
  const last = bounded ? Math.min(count, Math.ceil((top + height) / ROW_HEIGHT) + OVERSCAN) : count;
  const rows: ReactNode[] = [];
  for (let i = first; i < last; i++) {
    rows.push(
      <div key={i} style={{ height: ROW_HEIGHT }} className="flex whitespace-pre">
        {row(i)}
      </div>,
    );
  }
  return (
    <div
      ref={box}
      className={`font-mono text-sm leading-5 ${bounded ? "h-[min(70vh,36rem)] overflow-auto" : "overflow-x-auto"} ${className}`}
      onScroll={(e) => {
        const el = e.currentTarget;
        setTop(el.scrollTop);
        pinned.current = el.scrollTop + el.clientHeight >= el.scrollHeight - ROW_HEIGHT * 2;
      }}
      {...rest}
    >
      <div className="w-max min-w-full" style={{ boxSizing: "border-box", height: count * ROW_HEIGHT, paddingTop: first * ROW_HEIGHT }}>
        {rows}
      </div>
    </div>
  );
}
