"use client";

import { useRef, type ReactNode } from "react";
import { VirtualLines } from "./virtual-lines";

/** A row is cut at this many characters, and at every line break in the streamed text. */
const ROW_CHARS = 100;

/** A piece of one delta on one row. */
interface Segment {
  delta: number;
  from: number;
  to: number;
}

interface Rows {
  deltas: readonly string[];
  /** Deltas laid out so far. */
  done: number;
  /** Rows drawn before, by row: all but the last are complete (the same element each time, which React skips). */
  drawn: Map<number, ReactNode>;
  rows: Segment[][];
  width: number;
}

/** Lays out the deltas not laid out yet: work proportional to what arrived since the last time. */
function layout(state: Rows, count: number): void {
  for (let d = state.done; d < count; d++) {
    const text = state.deltas[d]!;
    let at = 0;
    while (at < text.length) {
      const row = state.rows[state.rows.length - 1]!;
      const newline = text.indexOf("\n", at);
      const room = ROW_CHARS - state.width;
      let to = Math.min(text.length, at + Math.max(room, 1));
      if (newline !== -1 && newline < to) to = newline;
      if (to > at) {
        row.push({ delta: d, from: at, to });
        state.width += to - at;
        at = to;
      }
      if (at === newline || state.width >= ROW_CHARS) {
        if (at === newline) at++;
        state.rows.push([]);
        state.width = 0;
      }
    }
  }
  state.done = count;
}

/**
 * The raw deltas as they came, alternately shaded so that each one shows, in rows of at most 100
 * characters (and at the text's own line breaks): each delta is laid out once, only the rows on
 * screen are drawn.
 */
export function RawDeltasView({ deltas, count, streaming }: { deltas: readonly string[]; count: number; streaming: boolean }) {
  const state = useRef<Rows>({ deltas, done: 0, drawn: new Map(), rows: [[]], width: 0 });
  if (state.current.deltas !== deltas || state.current.done > count) state.current = { deltas, done: 0, drawn: new Map(), rows: [[]], width: 0 };
  layout(state.current, count);
  const { rows, drawn } = state.current;
  const row = (r: number): ReactNode => {
    const hit = drawn.get(r);
    if (hit !== undefined) return hit;
    const node = rows[r]!.map((s) => (
      <span key={`${s.delta}-${s.from}`} className={s.delta % 2 ? "bg-blue-100 dark:bg-blue-950" : undefined}>
        {deltas[s.delta]!.slice(s.from, s.to)}
      </span>
    ));
    if (r < rows.length - 1) drawn.set(r, node);
    return node;
  };
  return <VirtualLines count={rows.length} version={count} row={row} follow={streaming} data-testid="result-raw" />;
}
