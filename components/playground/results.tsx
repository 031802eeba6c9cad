"use client";

import { useMemo } from "react";
import type { ApiClient, ApiError } from "@/lib/client/api";
import { Button } from "../ui/button";
import { FailureAlert } from "../ui/failure-alert";
import { compareRuns, Comparison } from "./comparison";
import { InboxPanel } from "./inbox-panel";
import { MetadataPanel } from "./metadata-panel";
import { ResultPanel } from "./result-panel";
import type { RunState } from "./use-run";

/** Request fields the composer shows errors beside; a problem elsewhere is listed in the headline. */
const PLACED = /^\/(schema|input|workflowSlug|contextSlugs|threadId|attachments|callback|type)/;

/** The result pane: status for screen readers, a failure's headline, the result(s) and metadata, the inbox. */
export function Results(props: {
  run: RunState;
  /** The variants run beside A (B, C, D), each with its column's name and what it is. */
  variants: { run: RunState; name: string; label: string }[];
  comparing: boolean;
  schema: unknown;
  /** The workflow and model a run is on, for the comparison's column headers. */
  describe(run: RunState): string;
  onRetry(): void;
  onEditSchema(): void;
  /** Reads a failed run's record: its usage and timing are shown as for a finished one. */
  client: ApiClient | null;
  apiKey: string | null;
  inbox: { client: ApiClient; apiKey: string; inboxId: string; runId: string } | null;
}) {
  const record = { client: props.client, apiKey: props.apiKey };
  const { run, variants, comparing, schema } = props;
  const apiError = run.status === "error" ? run.error : null;
  const status =
    run.status === "running" ? "Generating…" : run.status === "done" ? "Complete" : run.status === "error" ? `Failed: ${run.error?.detail ?? ""}` : run.status === "cancelled" ? "Cancelled" : "";
  const comparisons = useMemo(() => (comparing ? variants.map((v) => compareRuns(run, v.run)) : []), [comparing, run, variants]);
  // A's output is marked with its differences from B (the first variant); each variant with its own from A.
  const columns = [{ run, name: "A", label: props.describe(run), marks: comparisons[0]?.marks.a }, ...variants.map((v, i) => ({ run: v.run, name: v.name, label: props.describe(v.run) || v.label, marks: comparisons[i]?.marks.b }))];
  // Two columns side by side from a pane of 36rem; three or four from 64rem (two rows of two below that).
  const grid = columns.length === 2 ? "@xl:grid-cols-2" : columns.length === 3 ? "@xl:grid-cols-2 @5xl:grid-cols-3" : "@xl:grid-cols-2 @5xl:grid-cols-4";
  return (
    <div className="space-y-4 @container">
      <p role="status" aria-live="polite" className="sr-only">
        {status}
      </p>
      <RunError error={apiError} running={run.status === "running"} onRetry={props.onRetry} onEditSchema={props.onEditSchema} />
      {comparing ? (
        <>
          {variants.map((v, i) => (
            <Comparison key={v.name} a={run} b={v.run} comparison={comparisons[i] ?? null} name={v.name} />
          ))}
          <div className={`grid gap-4 ${grid}`}>
            {columns.map((col) => (
              <div key={col.name} className="min-w-0 space-y-4">
                <ResultPanel run={col.run} schema={schema} suffix={col.name} subtitle={col.label} marks={col.marks} />
                <MetadataPanel run={col.run} suffix={col.name} {...record} />
              </div>
            ))}
          </div>
        </>
      ) : (
        <>
          <ResultPanel run={run} schema={schema} />
          <MetadataPanel run={run} {...record} />
        </>
      )}
      {props.inbox ? <InboxPanel {...props.inbox} /> : null}
    </div>
  );
}

/**
 * A failed run's headline: what happened in words, its code, status and run id, what to do next
 * (Retry; Edit schema when the schema or the output's shape is at fault), and every problem that is
 * not already shown beside its field.
 */
function RunError({ error, running, onRetry, onEditSchema }: { error: ApiError | null; running: boolean; onRetry(): void; onEditSchema(): void }) {
  if (!error) return null;
  if (error.code === "unauthorized") {
    return (
      <p role="alert" className="text-sm text-red-800 dark:text-red-300">
        {error.detail}
      </p>
    );
  }
  const unplaced = error.errors.filter((p) => !PLACED.test(p.path));
  const aboutSchema = error.code === "output_invalid" || error.errors.some((p) => p.path.startsWith("/schema"));
  const elsewhere = error.errors.length - unplaced.length;
  return (
    <FailureAlert
      error={error}
      problems={unplaced}
      actions={
        <>
          <Button size="md" onClick={onRetry} disabled={running}>
            Retry
          </Button>
          {aboutSchema ? (
            <Button size="md" onClick={onEditSchema}>
              Edit schema
            </Button>
          ) : null}
        </>
      }
    >
      {elsewhere > 0 ? <p className="mt-1">{elsewhere === 1 ? "One problem is" : `${elsewhere} problems are`} marked beside the field it concerns.</p> : null}
    </FailureAlert>
  );
}
