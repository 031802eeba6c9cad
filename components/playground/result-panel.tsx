"use client";

import { useEffect, useState } from "react";
import type { RunState } from "./use-run";
import { escapePointerSegment } from "@/lib/json/pointer";
import { Badge } from "../ui/badge";
import { Panel } from "../ui/panel";

type Tab = "object" | "tree" | "raw";

interface Props {
  run: RunState;
  schema: unknown;
  /** Distinguishes the second run when comparing ("B"). */
  suffix?: string;
}

/** The output: pretty object (live), schema-aware tree with field states, or the raw deltas. */
export function ResultPanel({ run, schema, suffix }: Props) {
  const [tab, setTab] = useState<Tab>("object");
  const streaming = run.status === "running";
  const isText = run.operation === "generate-text";
  const value = run.status === "done" ? (isText ? run.text : run.object) : run.snapshot?.value;

  return (
    <Panel aria-label={suffix ? `Result ${suffix}` : "Result"}>
      <div className="flex flex-wrap items-center gap-2">
        <h2 className="mr-auto text-lg font-semibold">{suffix ? `Result ${suffix}` : "Result"}</h2>
        {run.status === "done" && !isText ? (
          <span className="rounded bg-green-100 px-2 py-0.5 text-sm font-medium text-green-900 dark:bg-green-900 dark:text-green-100">Valid against schema</span>
        ) : null}
        {run.restarts > 0 ? (
          <span className="rounded bg-amber-100 px-2 py-0.5 text-sm text-amber-900 dark:bg-amber-900 dark:text-amber-100">
            Restarted {run.restarts}× after invalid output
          </span>
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
      {run.status === "running" && run.operation !== "stream-object" ? <Elapsed since={run.startedAt} /> : null}
      <div role="log" tabIndex={0} aria-busy={streaming} aria-label={suffix ? `Output ${suffix}` : "Output"} className="mt-3 max-h-[28rem] min-h-32 overflow-auto rounded bg-zinc-50 p-3 dark:bg-zinc-900">
        {value === undefined || value === null && run.status === "idle" ? (
          <p className="text-sm text-zinc-600 dark:text-zinc-400">{run.status === "idle" ? "Run a workflow to see its output here." : run.status === "running" ? "Waiting for the first item…" : ""}</p>
        ) : isText ? (
          <p className="whitespace-pre-wrap text-sm">{String(value)}</p>
        ) : tab === "raw" ? (
          <pre className="whitespace-pre-wrap break-all font-mono text-xs">
            {run.deltas.map((d, i) => (
              <span key={i} className={i % 2 ? "bg-blue-100 dark:bg-blue-950" : undefined}>
                {d}
              </span>
            ))}
          </pre>
        ) : tab === "tree" ? (
          <FieldTree value={value} schema={schema} closed={new Set(run.closed)} streamingPath={run.snapshot?.streamingPath ?? null} final={run.status === "done"} />
        ) : (
          <pre className="whitespace-pre-wrap break-all font-mono text-xs" data-testid="result-object">
            {JSON.stringify(value, null, 2)}
          </pre>
        )}
      </div>
      {run.parseError ? <p className="mt-2 text-sm text-amber-800 dark:text-amber-300">The streamed text is not JSON so far: {run.parseError}</p> : null}
    </Panel>
  );
}

function Elapsed({ since }: { since: number | null }) {
  const [now, setNow] = useState(() => performance.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(performance.now()), 100);
    return () => clearInterval(timer);
  }, []);
  return (
    <p className="mt-2 flex items-center gap-2 text-sm">
      <span className="inline-block h-3 w-3 animate-spin rounded-full border-2 border-zinc-400 border-t-transparent" aria-hidden />
      Generating… {since !== null ? ((now - since) / 1000).toFixed(1) : "0.0"} s
    </p>
  );
}

type FieldState = "pending" | "streaming" | "done";

interface TreeProps {
  value: unknown;
  schema: unknown;
  closed: Set<string>;
  streamingPath: string | null;
  final: boolean;
}

/** The partial value as a tree: each field's state, and required fields not written yet. */
function FieldTree({ value, schema, closed, streamingPath, final }: TreeProps) {
  const state = (path: string): FieldState =>
    final || closed.has(path) ? "done" : streamingPath !== null && (streamingPath === path || streamingPath.startsWith(`${path}/`)) ? "streaming" : "pending";
  return (
    <ul className="font-mono text-xs">
      <Node name="(root)" path="" value={value} schema={schema} state={state} />
    </ul>
  );
}

function Node({ name, path, value, schema, state }: { name: string; path: string; value: unknown; schema: unknown; state: (p: string) => FieldState }) {
  const s = schema as { properties?: Record<string, unknown>; required?: string[]; items?: unknown } | undefined;
  const fieldState = state(path);
  const badge = (
    <Badge className="ml-2" tone={fieldState === "done" ? "success" : fieldState === "streaming" ? "info" : "neutral"}>
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
            <Node key={k} name={k} path={`${path}/${escapePointerSegment(k)}`} value={v} schema={Array.isArray(value) ? s?.items : s?.properties?.[k]} state={state} />
          ))}
          {missing.map((k) => (
            <li key={`missing-${k}`} className="text-zinc-600 dark:text-zinc-400">
              {k}{" "}
              <Badge className="ml-2" tone="warning">
                required, not written yet
              </Badge>
            </li>
          ))}
        </ul>
      </li>
    );
  }
  return (
    <li>
      {name}: <span>{JSON.stringify(value)}</span>
      {badge}
    </li>
  );
}
