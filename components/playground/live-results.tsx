"use client";

import { memo, useMemo, type ComponentProps } from "react";
import { Results } from "./results";
import { useRunState, type RunStore } from "./use-run";

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

/**
 * The result pane subscribed to the runs themselves: a streamed delta re-renders it and nothing
 * around it (the composer reads only a run's start and end). Memoised: a key press in the composer
 * does not redraw the output either, as long as the props stay the same.
 */
export const LiveResults = memo(function LiveResults({ store, others, columns, ...props }: Props) {
  const run = useRunState(store);
  // One subscription per variant store (always three, in order: hooks cannot be counted per render).
  const b = useRunState(others[0]!);
  const c = useRunState(others[1]!);
  const d = useRunState(others[2]!);
  const variants = useMemo(() => {
    const states = [b, c, d];
    return columns.map((col) => ({ run: states[col.index]!, name: col.name, label: col.label }));
  }, [columns, b, c, d]);
  return <Results run={run} variants={variants} {...props} />;
});
