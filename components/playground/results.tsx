"use client";

import type { ApiClient, ApiError } from "@/lib/client/api";
import { ERROR_CODES } from "@/lib/errors";
import { ErrorAlert } from "../ui/panel";
import { Comparison } from "./comparison";
import { InboxPanel } from "./inbox-panel";
import { MetadataPanel } from "./metadata-panel";
import { ResultPanel } from "./result-panel";
import type { RunState } from "./use-run";

/** Request fields the composer shows errors beside; a problem elsewhere is shown above the results. */
const PLACED = /^\/(schema|input|workflowSlug|contextSlugs|threadId|attachments|callback|type)/;

/** The result column: status for screen readers, the error, the result(s) and metadata, the inbox. */
export function Results(props: {
  run: RunState;
  runB: RunState;
  comparing: boolean;
  schema: unknown;
  /** Reads a failed run's record: its usage and timing are shown as for a finished one. */
  client: ApiClient | null;
  apiKey: string | null;
  inbox: { client: ApiClient; apiKey: string; inboxId: string; runId: string } | null;
}) {
  const record = { client: props.client, apiKey: props.apiKey };
  const { run, runB, comparing, schema } = props;
  const apiError = run.status === "error" ? run.error : null;
  const status =
    run.status === "running" ? "Generating…" : run.status === "done" ? "Complete" : run.status === "error" ? `Failed: ${run.error?.detail ?? ""}` : run.status === "cancelled" ? "Cancelled" : "";
  return (
    <div className="space-y-4">
      <p role="status" aria-live="polite" className="sr-only">
        {status}
      </p>
      <RunError error={apiError} />
      {comparing ? (
        <>
          <div className="grid gap-4 xl:grid-cols-2">
            <div className="space-y-4">
              <ResultPanel run={run} schema={schema} suffix="A" />
              <MetadataPanel run={run} suffix="A" {...record} />
            </div>
            <div className="space-y-4">
              <ResultPanel run={runB} schema={schema} suffix="B" />
              <MetadataPanel run={runB} suffix="B" {...record} />
            </div>
          </div>
          <Comparison a={run} b={runB} />
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

/** A failed run: its code and every problem when some are not shown beside a field, else the detail. */
function RunError({ error }: { error: ApiError | null }) {
  if (!error) return null;
  const unplaced = error.code !== "unauthorized" && (error.errors.length === 0 || error.errors.some((p) => !PLACED.test(p.path)));
  if (!unplaced) {
    return (
      <p role="alert" className="text-sm text-red-800 dark:text-red-300">
        {error.detail}
      </p>
    );
  }
  return (
    <ErrorAlert>
      <p className="font-semibold">{ERROR_CODES[error.code as keyof typeof ERROR_CODES]?.title ?? "The run failed"}</p>
      <p>{error.detail}</p>
      <p className="mt-1 text-xs opacity-80">
        <code>{error.code}</code>
        {error.status ? ` · HTTP ${error.status}` : ""}
        {error.runId ? ` · run ${error.runId}` : ""}
      </p>
      {error.errors.length > 0 ? (
        <ul className="mt-1 list-disc pl-5">
          {error.errors.map((p, i) => (
            <li key={i}>
              <code>{p.path}</code>: {p.message}
            </li>
          ))}
        </ul>
      ) : null}
    </ErrorAlert>
  );
}
