"use client";

import type { JsonMark } from "../../ui/json-view";
import type { RunState } from "../use-run";
import { LiveFieldsView } from "./live-fields-view";
import { LiveJsonView } from "./live-json-view";
import { RawDeltasView } from "./raw-deltas-view";

/** A finished document longer than this is shown by the incremental views too (drawing it whole would stall the page). */
const LARGE_LINES = 1_000;
const LARGE_DELTAS = 1_000;

type Tab = "object" | "tree" | "raw";

/**
 * Whether a stream's output is shown by the incremental views: always while it streams, and after
 * when it is long. A short finished output keeps the views of a whole value (JsonView, the field
 * tree), which count items when folded and list missing fields on rows of their own.
 */
export function liveViewOf(run: RunState, tab: Tab): boolean {
  if (!run.doc || run.streamedChars === 0 || run.operation !== "stream-object") return false;
  if (run.status === "running") return true;
  if (run.status === "error" && run.error?.code !== "output_invalid" && run.snapshot?.value === undefined) return false;
  return tab === "raw" ? run.deltas.length > LARGE_DELTAS : run.doc.count > LARGE_LINES;
}

/** The stream's output in the chosen view, drawn incrementally (see components/playground/output/). */
export function LiveOutput({ run, tab, schema, marks }: { run: RunState; tab: Tab; schema: unknown; marks: ReadonlyMap<string, JsonMark> }) {
  const doc = run.doc!;
  const ended = run.status === "done" ? "done" : run.status === "running" ? null : "stopped";
  if (tab === "raw") return <RawDeltasView deltas={run.deltas} count={run.deltas.length} streaming={run.status === "running"} />;
  if (tab === "tree") return <LiveFieldsView doc={doc} version={run.docVersion} schema={schema} closed={run.closedSet} ended={ended} />;
  return <LiveJsonView doc={doc} version={run.docVersion} marks={marks} streaming={run.status === "running"} data-testid="result-object" />;
}
