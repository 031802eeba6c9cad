"use client";

import { useMemo, useState, type ReactNode } from "react";
import type { RunState } from "./use-run";
import { parseJsonOrUndefined } from "@/lib/client/composition";
import { escapePointerSegment } from "@/lib/json/pointer";
import { Button } from "../ui/button";
import { Badge } from "../ui/badge";
import { JsonView, problemMarks, type JsonMark } from "../ui/json-view";
import { Panel } from "../ui/panel";
import { RunStatusChip } from "./run-status";
import { liveViewOf, LiveOutput } from "./output/live-output";

type Tab = "object" | "tree" | "raw";

interface Props {
  run: RunState;
  schema: unknown;
  /** Distinguishes the second run when comparing ("B"). */
  suffix?: string;
  /** What the run is (its workflow and model), when comparing. */
  subtitle?: ReactNode;
  /** Places to mark in the output besides its failing ones (a comparison's differences). */
  marks?: ReadonlyMap<string, JsonMark>;
  /** In a comparison column: the subtitle on its own line, and the output scrolls inside the column. */
  compact?: boolean;
  /** Shown under the title (a comparison column's deltas against A). */
  header?: ReactNode;
}

/**
 * What a failed object run last produced: the stream's last attempt as far as it went, else the
 * model's last output the API returned with `output_invalid` (as JSON when it parses).
 */
function lastOutputOf(run: RunState): { value: unknown; raw: string | null } | null {
  if (run.status !== "error" || run.operation === "generate-text") return null;
  if (run.snapshot?.value !== undefined && run.snapshot.value !== null) return { value: run.snapshot.value, raw: null };
  const text = run.error?.lastOutput;
  if (text === undefined) return null;
  const value = parseJsonOrUndefined(text);
  return value === undefined ? { value, raw: text } : { value, raw: null };
}

/** The output: pretty object (live), schema-aware tree with field states, or the raw deltas. */
export function ResultPanel({ run, schema, suffix, subtitle, marks, compact = false, header }: Props) {
  const [tab, setTab] = useState<Tab>("object");
  const streaming = run.status === "running";
  const isText = run.operation === "generate-text";
  const failed = lastOutputOf(run);
  const value = run.status === "done" ? (isText ? run.text : run.object) : (failed?.value ?? run.snapshot?.value);
  // What Copy and Download give, once the run has ended (never recomputed while it streams).
  const output = useMemo(
    () => (streaming ? null : (failed?.raw ?? (value === undefined || value === null ? null : typeof value === "string" ? value : JSON.stringify(value, null, 2)))),
    [streaming, failed?.raw, value],
  );
  const allMarks = useMemo(() => new Map([...(marks ?? []), ...(run.error?.code === "output_invalid" ? problemMarks(run.error.errors) : [])]), [marks, run.error]);
  const download = () => {
    if (output === null) return;
    const url = URL.createObjectURL(new Blob([output], { type: isText ? "text/plain" : "application/json" }));
    const link = document.createElement("a");
    link.href = url;
    link.download = `${run.runId ?? "output"}.${isText ? "txt" : "json"}`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 1_000);
  };
  const title = suffix ? `Result ${suffix}` : "Result";
  const partial = value !== undefined && (run.status === "cancelled" || (run.status === "error" && run.error?.code !== "output_invalid"));

  return (
    <Panel aria-label={title}>
      <div className="flex flex-wrap items-center gap-2">
        <h2 className="mr-auto min-w-0 text-lg font-semibold">
          {title}
          {subtitle ? <span className={`text-sm font-normal text-zinc-700 dark:text-zinc-300 ${compact ? "block [overflow-wrap:anywhere]" : "ml-2"}`}> {subtitle}</span> : null}
        </h2>
        {run.status === "done" && !isText ? (
          <span className="rounded bg-green-100 px-2 py-0.5 text-sm font-medium text-green-900 dark:bg-green-900 dark:text-green-100">{compact ? "Valid" : "Valid against schema"}</span>
        ) : null}
        {run.restarts > 0 ? (
          <span className="rounded bg-amber-100 px-2 py-0.5 text-sm text-amber-900 dark:bg-amber-900 dark:text-amber-100">
            Restarted {run.restarts}× after invalid output
          </span>
        ) : null}
        {output !== null && run.status !== "running" ? (
          <>
            <Button size="sm" onClick={() => void navigator.clipboard?.writeText(output)} aria-label={suffix ? `Copy output ${suffix}` : "Copy output"}>
              Copy
            </Button>
            <Button size="sm" onClick={download} aria-label={suffix ? `Download output ${suffix}` : "Download output"}>
              Download
            </Button>
          </>
        ) : null}
        {!isText ? (
          <div role="tablist" aria-label={suffix ? `Result ${suffix} view` : "Result view"} className="flex gap-1">
            {(["object", "tree", "raw"] as const).map((t) => (
              <button
                key={t}
                role="tab"
                type="button"
                aria-selected={tab === t}
                onClick={() => setTab(t)}
                className={`rounded px-2 py-1 text-sm ${tab === t ? "bg-zinc-900 text-white dark:bg-zinc-100 dark:text-zinc-900" : "border border-zinc-300 dark:border-zinc-700"}`}
              >
                {t === "object" ? "Object" : t === "tree" ? "Fields" : "Raw deltas"}
              </button>
            ))}
          </div>
        ) : null}
      </div>
      {header}
      <RunStatusChip run={run} />
      {failed ? (
        <p className="mt-2 text-sm text-zinc-700 dark:text-zinc-300">
          {run.error?.code === "output_invalid" ? "The model's last output, its failing places marked:" : "What had arrived when the run failed:"}
        </p>
      ) : null}
      <div
        role="log"
        tabIndex={0}
        aria-busy={streaming}
        aria-label={suffix ? `Output ${suffix}` : "Output"}
        // A partial output (cancelled, or cut by a failure) is dimmed: grey and dashed, still readable.
        data-partial={partial || undefined}
        // Side by side, each column's output scrolls inside it so every column stays in view.
        className={`mt-3 min-h-32 overflow-auto rounded p-3 ${compact ? "lg:max-h-[calc(100dvh-21rem)]" : ""} ${partial ? "border border-dashed border-zinc-400 bg-zinc-100 grayscale dark:border-zinc-600 dark:bg-zinc-900" : "bg-zinc-50 dark:bg-zinc-900"}`}
      >
        {failed?.raw !== undefined && failed.raw !== null ? (
          <>
            <p className="mb-2 text-sm text-red-800 dark:text-red-300">It is not JSON{run.error?.errors[0] ? `: ${run.error.errors[0].message}` : ""}.</p>
            <pre className="whitespace-pre-wrap font-mono text-sm [overflow-wrap:anywhere]" data-testid="result-object">
              {failed.raw}
            </pre>
          </>
        ) : !isText && liveViewOf(run, tab) ? (
          <LiveOutput run={run} tab={tab} schema={schema} marks={allMarks} />
        ) : value === undefined || (value === null && run.status === "idle") ? (
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            {run.status === "idle" ? "Run a workflow to see its output here." : run.status === "running" ? (run.restarts > 0 ? `Attempt ${run.restarts + 1}: waiting for the first item…` : "Waiting for the first item…") : "Nothing had arrived."}
          </p>
        ) : isText ? (
          <p className="whitespace-pre-wrap text-sm [overflow-wrap:anywhere]">{String(value)}</p>
        ) : tab === "raw" ? (
          <pre className="whitespace-pre-wrap break-all font-mono text-sm">
            {run.deltas.map((d, i) => (
              <span key={i} className={i % 2 ? "bg-blue-100 dark:bg-blue-950" : undefined}>
                {d}
              </span>
            ))}
          </pre>
        ) : tab === "tree" ? (
          <FieldTree value={value} schema={schema} closed={new Set(run.closed)} streamingPath={run.snapshot?.streamingPath ?? null} ended={run.status === "done" ? "done" : run.status === "running" ? null : "stopped"} />
        ) : (
          <JsonView value={value} marks={allMarks} caret={streaming ? (run.snapshot?.streamingPath ?? null) : null} data-testid="result-object" />
        )}
      </div>
      {run.parseError ? <p className="mt-2 text-sm text-amber-800 dark:text-amber-300">The streamed text is not JSON so far: {run.parseError}</p> : null}
    </Panel>
  );
}

type FieldState = "pending" | "streaming" | "done" | "stopped";

interface TreeProps {
  value: unknown;
  schema: unknown;
  closed: Set<string>;
  streamingPath: string | null;
  /** How the run ended: every field done, or the unfinished ones stopped; null while it runs. */
  ended: "done" | "stopped" | null;
}

/** The partial value as a tree: each field's state, and required fields not written yet. */
function FieldTree({ value, schema, closed, streamingPath, ended }: TreeProps) {
  const state = (path: string): FieldState => {
    if (ended === "done" || closed.has(path)) return "done";
    if (ended === "stopped") return "stopped";
    return streamingPath !== null && (streamingPath === path || streamingPath.startsWith(`${path}/`)) ? "streaming" : "pending";
  };
  return (
    <ul className="font-mono text-sm">
      <Node name="(root)" path="" value={value} schema={schema} state={state} ended={ended} />
    </ul>
  );
}

const TONE = { done: "success", streaming: "info", pending: "neutral", stopped: "warning" } as const;

function Node({ name, path, value, schema, state, ended }: { name: string; path: string; value: unknown; schema: unknown; state: (p: string) => FieldState; ended: TreeProps["ended"] }) {
  const s = schema as { properties?: Record<string, unknown>; required?: string[]; items?: unknown } | undefined;
  const fieldState = state(path);
  const badge = (
    <Badge className="ml-2" tone={TONE[fieldState]}>
      {fieldState}
    </Badge>
  );
  if (value !== null && typeof value === "object") {
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
    const missing = !Array.isArray(value) ? (s?.required ?? []).filter((k) => !(k in (value as object))) : [];
    return (
      <li>
        <span className="font-semibold">{name}</span>
        {badge}
        <ul className="ml-4 border-l border-zinc-300 pl-2 dark:border-zinc-700">
          {entries.map(([k, v]) => (
            <Node key={k} name={k} path={`${path}/${escapePointerSegment(k)}`} value={v} schema={Array.isArray(value) ? s?.items : s?.properties?.[k]} state={state} ended={ended} />
          ))}
          {missing.map((k) => (
            <li key={`missing-${k}`} className="text-zinc-600 dark:text-zinc-400">
              {k}{" "}
              <Badge className="ml-2" tone="warning">
                {ended === "stopped" ? "required, never written" : "required, not written yet"}
              </Badge>
            </li>
          ))}
        </ul>
      </li>
    );
  }
  return (
    <li className="[overflow-wrap:anywhere]">
      {name}: <span>{JSON.stringify(value)}</span>
      {badge}
    </li>
  );
}
