"use client";

import { useEffect, useState } from "react";
import { estimateTokens } from "@/lib/domain/tokens";
import { formatDuration } from "@/lib/client/format";
import { Badge } from "../ui/badge";
import { useRunState, type RunState, type RunStore } from "./use-run";

/**
 * Where the run is, at a glance: while it runs, the time so far (a stream: its first item, the
 * output's tokens so far, estimated, and their rate); after, how it ended and when.
 */
export function RunStatusChip({ run, compact = false }: { run: RunState; compact?: boolean }) {
  const [now, setNow] = useState(() => performance.now());
  const running = run.status === "running";
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => setNow(performance.now()), 100);
    return () => clearInterval(timer);
  }, [running]);
  // While it runs, the time now (`now` ticks to redraw; taken when the chip was last drawn, it would
  // be older than the run's start until the first tick: a negative time).
  const end = running ? Math.max(now, performance.now()) : (run.finishedAt ?? now);
  const elapsed = run.startedAt === null ? null : end - run.startedAt;
  const streamed = run.streamedChars;
  const tokens = run.operation === "stream-object" ? estimateTokens(streamed) : null;
  const streamingFor = run.firstItemAt === null ? null : end - run.firstItemAt;
  if (run.status === "idle") {
    return (
      <p className={`${compact ? "" : "mt-2 "}flex items-center gap-2 text-sm`} data-testid="run-status">
        <Badge>Ready · nothing run yet</Badge>
      </p>
    );
  }
  const parts: string[] = [];
  const head = { running: run.operation === "stream-object" ? "Streaming" : "Generating", done: "Done", error: "Failed after", cancelled: "Cancelled at", idle: "" }[run.status];
  // Once the run is recorded, its own duration (the metadata's, as the Duration row shows it) rather
  // than the browser's, which adds the round trip: one run, one number.
  const recorded = run.metadata && !running ? run.metadata.durationInMs : null;
  parts.push(`${head} ${formatDuration(recorded ?? elapsed)}`);
  if (run.operation === "stream-object") {
    if (run.firstItemAt !== null && run.startedAt !== null) {
      const first = run.firstItemAt - run.startedAt;
      // Measured by this browser (from sending the request), beside a duration the server recorded:
      // shown only where it can be placed before "Done" (a busy page or a slow network can make the
      // browser's count the longer one: then it is left out, never shown later than the end).
      if (recorded === null || first < recorded) parts.push(`first item ${formatDuration(first)}`);
    } else parts.push(running ? "waiting for the first item" : "nothing had arrived");
    if (run.metadata) parts.push(`${run.metadata.outputTokens} tok`);
    else if (tokens) parts.push(`~${tokens} tok${streamingFor && streamingFor > 200 ? ` · ${Math.round(tokens / (streamingFor / 1000))} tok/s` : ""}`);
  } else if (run.metadata) {
    parts.push(`${run.metadata.outputTokens} tok`);
  }
  if (run.restarts > 0) parts.push(`retry ${run.restarts}`);
  const tone = run.status === "done" ? "success" : run.status === "error" ? "danger" : run.status === "cancelled" ? "warning" : "info";
  return (
    <p className={`${compact ? "" : "mt-2 "}flex min-w-0 items-center gap-2 text-sm`} data-testid="run-status">
      {running ? <span className="inline-block h-3 w-3 animate-spin rounded-full border-2 border-zinc-400 border-t-transparent" aria-hidden /> : null}
      <Badge tone={tone} className={compact ? "truncate" : ""}>
        {parts.join(" · ")}
      </Badge>
    </p>
  );
}

/** The chip for a run held in a store: only it re-renders as the run streams, not what holds it. */
export function LiveRunStatusChip({ store, compact = false }: { store: RunStore; compact?: boolean }) {
  return <RunStatusChip run={useRunState(store)} compact={compact} />;
}
