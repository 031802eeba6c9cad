"use client";

import { useMemo, useState } from "react";
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
  /**
   * With three or four columns the composer steps aside on wide screens (as in presenter view) so
   * every column fits side by side; this brings it back (the columns then go two by two).
   */
  composer?: { shown: boolean; toggle(): void } | null;
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
  // From 1024 px (lg) the columns stand side by side (two by two when the composer is beside three
  // or four); below that one column shows at a time, chosen with the tabs above them.
  const [shown, setShown] = useState("A");
  const selected = columns.some((c) => c.name === shown) ? shown : "A";
  const grid = columns.length === 2 || props.composer?.shown ? "lg:grid-cols-2" : columns.length === 3 ? "lg:grid-cols-3" : "lg:grid-cols-4";
  return (
    <div className="space-y-4">
      <p role="status" aria-live="polite" className="sr-only">
        {status}
      </p>
      <RunError error={apiError} running={run.status === "running"} onRetry={props.onRetry} onEditSchema={props.onEditSchema} />
      {comparing ? (
        <>
          <div className="flex flex-wrap items-center gap-2">
            <div role="tablist" aria-label="Variants" className="flex rounded border border-zinc-300 lg:hidden dark:border-zinc-700">
              {columns.map((col) => (
                <button
                  key={col.name}
                  type="button"
                  role="tab"
                  id={`variant-tab-${col.name}`}
                  aria-selected={selected === col.name}
                  aria-controls={`variant-${col.name}`}
                  onClick={() => setShown(col.name)}
                  onKeyDown={(e) => {
                    const at = columns.findIndex((c) => c.name === selected);
                    const step = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
                    if (!step) return;
                    const next = columns[(at + step + columns.length) % columns.length]!.name;
                    setShown(next);
                    document.getElementById(`variant-tab-${next}`)?.focus();
                  }}
                  tabIndex={selected === col.name ? 0 : -1}
                  className={`min-w-11 px-3 py-1.5 text-sm font-medium ${selected === col.name ? "bg-zinc-900 text-white dark:bg-zinc-100 dark:text-zinc-900" : "text-zinc-800 dark:text-zinc-200"}`}
                >
                  {col.name}
                </button>
              ))}
            </div>
            <p className="text-sm text-zinc-700 dark:text-zinc-300">
              {columns.length} variants on the same input; Δ is each one against A.
            </p>
            {props.composer ? (
              <button type="button" className="ml-auto hidden text-sm text-blue-700 underline lg:inline dark:text-blue-400" aria-pressed={props.composer.shown} onClick={props.composer.toggle}>
                {props.composer.shown ? "Hide the composer" : "Show the composer"}
              </button>
            ) : null}
          </div>
          <div className={`grid gap-3 ${grid}`}>
            {columns.map((col, i) => (
              <div key={col.name} id={`variant-${col.name}`} data-variant={col.name} className={`min-w-0 space-y-2 ${selected === col.name ? "" : "hidden lg:block"}`}>
                <ResultPanel
                  run={col.run}
                  schema={schema}
                  suffix={col.name}
                  subtitle={col.label}
                  marks={col.marks}
                  compact
                  header={i === 0 ? <p className="mt-2 text-xs text-zinc-700 dark:text-zinc-300">{columns.length > 2 ? `The baseline: B–${columns.at(-1)!.name} are compared with it.` : "The baseline: B is compared with it."}</p> : <Comparison a={run} b={col.run} comparison={comparisons[i - 1] ?? null} name={col.name} compact />}
                />
                <MetadataPanel run={col.run} suffix={col.name} compact {...record} />
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
