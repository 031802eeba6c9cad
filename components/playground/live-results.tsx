"use client";

import { memo, useDeferredValue, useMemo, type ComponentProps } from "react";
import { Results } from "./results";
import { runToDraw, useRunState, type RunState, type RunStore } from "./use-run";

/** A variant's column: which of the other runs (B, C, D by position) and what it is. */
export interface ComparedColumn {
  index: number;
  name: string;
  label: string;
}

type Props = Omit<ComponentProps<typeof Results>, "run" | "variants"> & {
  store: RunStore;
  /** The variants' runs (B, C, D), always the same stores. */
  others: readonly RunStore[];
  /** The columns shown beside A (the variants that have run). */
  columns: ComparedColumn[];
};

/** Drawn only when its props change: the urgent render of a streamed batch (see below) stops here. */
const DrawnResults = memo(Results);

/**
 * A run as the pane draws it: a stream's batches at transition priority (`useDeferredValue`), so
 * that drawing one yields to a key press every few milliseconds and a batch overtaken by the next
 * is never drawn; anything else (a start, a restart, the end) at once.
 */
function useDrawnRun(store: RunStore): RunState {
  const now = useRunState(store);
  return runToDraw(now, useDeferredValue(now));
}

/**
 * The result pane subscribed to the runs themselves: a streamed delta re-renders it and nothing
 * around it (the composer reads only a run's start and end). Memoised: a key press in the composer
 * does not redraw the output either, as long as the props stay the same. A stream's batches are
 * drawn at transition priority: the store's update renders only this component (the pane below
 * keeps its props), and React draws the batch in slices it interrupts for input.
 */
export const LiveResults = memo(function LiveResults({ store, others, columns, ...props }: Props) {
  const run = useDrawnRun(store);
  // One subscription per variant store (always three, in order: hooks cannot be counted per render).
  const b = useDrawnRun(others[0]!);
  const c = useDrawnRun(others[1]!);
  const d = useDrawnRun(others[2]!);
  const variants = useMemo(() => {
    const states = [b, c, d];
    return columns.map((col) => ({ run: states[col.index]!, name: col.name, label: col.label }));
  }, [columns, b, c, d]);
  return <DrawnResults run={run} variants={variants} {...props} />;
});
