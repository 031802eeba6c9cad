"use client";

import { useEffect, useState } from "react";
import type { RunState } from "./use-run";
import { escapePointerSegment } from "@/lib/json/pointer";
import { estimateTokens } from "@/lib/domain/tokens";
import { formatDuration } from "@/lib/client/format";
import { Button } from "../ui/button";
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
  const output = value === undefined || value === null ? null : typeof value === "string" ? value : JSON.stringify(value, null, 2);
  const download = () => {
    if (output === null) return;
    const url = URL.createObjectURL(new Blob([output], { type: isText ? "text/plain" : "application/json" }));
    const link = document.createElement("a");
    link.href = url;
    link.download = `${run.runId ?? "output"}.${isText ? "txt" : "json"}`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 1_000);
  };

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
      {run.status !== "idle" ? <RunStatusChip run={run} /> : null}
      <div
        role="log"
        tabIndex={0}
        aria-busy={streaming}
        aria-label={suffix ? `Output ${suffix}` : "Output"}
        className={`mt-3 max-h-[28rem] min-h-32 overflow-auto rounded bg-zinc-50 p-3 dark:bg-zinc-900 ${run.status === "cancelled" || run.status === "error" ? "opacity-60" : ""}`}
      >
        {value === undefined || value === null && run.status === "idle" ? (
          <p className="text-sm text-zinc-600 dark:text-zinc-400">{run.status === "idle" ? "Run a workflow to see its output here." : run.status === "running" ? "Waiting for the first item…" : ""}</p>
        ) : isText ? (
          <p className="whitespace-pre-wrap text-sm [overflow-wrap:anywhere]">{String(value)}</p>
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
          <pre className="whitespace-pre-wrap font-mono text-sm [overflow-wrap:anywhere]" data-testid="result-object">
            {JSON.stringify(value, null, 2)}
          </pre>
        )}
      </div>
      {run.parseError ? <p className="mt-2 text-sm text-amber-800 dark:text-amber-300">The streamed text is not JSON so far: {run.parseError}</p> : null}
    </Panel>
  );
}

/**
 * Where the run is, at a glance: while it runs, the time so far (a stream: its first item, the
 * output's tokens so far, estimated, and their rate); after, how it ended and when.
 */
function RunStatusChip({ run }: { run: RunState }) {
  const [now, setNow] = useState(() => performance.now());
  const running = run.status === "running";
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => setNow(performance.now()), 100);
    return () => clearInterval(timer);
  }, [running]);
  const end = running ? now : (run.finishedAt ?? now);
  const elapsed = run.startedAt === null ? null : end - run.startedAt;
  const streamed = run.deltas.reduce((n, d) => n + d.length, 0);
  const tokens = run.operation === "stream-object" ? estimateTokens(streamed) : null;
  const streamingFor = run.firstItemAt === null ? null : end - run.firstItemAt;
  const parts: string[] = [];
  const head = { running: run.operation === "stream-object" ? "Streaming" : "Generating", done: "Done", error: "Failed after", cancelled: "Cancelled at", idle: "" }[run.status];
  parts.push(`${head} ${formatDuration(elapsed)}`);
  if (run.operation === "stream-object") {
    parts.push(run.firstItemAt !== null && run.startedAt !== null ? `first item ${formatDuration(run.firstItemAt - run.startedAt)}` : "waiting for the first item");
    if (tokens) parts.push(`~${tokens} tok${streamingFor && streamingFor > 200 ? ` · ${Math.round(tokens / (streamingFor / 1000))} tok/s` : ""}`);
  }
  if (run.restarts > 0) parts.push(`retry ${run.restarts}`);
  const tone = run.status === "done" ? "success" : run.status === "error" ? "danger" : run.status === "cancelled" ? "warning" : "info";
  return (
    <p className="mt-2 flex items-center gap-2 text-sm" data-testid="run-status">
      {running ? <span className="inline-block h-3 w-3 animate-spin rounded-full border-2 border-zinc-400 border-t-transparent" aria-hidden /> : null}
      <Badge tone={tone}>{parts.join(" · ")}</Badge>
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
