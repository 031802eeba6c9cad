"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import type { ApiClient } from "@/lib/client/api";
import { formatDuration, formatUsd } from "@/lib/client/format";
import { queryKeys } from "@/lib/client/query-keys";
import type { RunState } from "./use-run";
import { Panel } from "../ui/panel";

const ms = (a: number | null, b: number | null) => (a !== null && b !== null ? formatDuration(b - a) : "—");

/**
 * Run id, model, tokens, cost and timings; filled in as the run progresses and when it ends. A run
 * that failed keeps them too: they are read from its record (what it used is billed all the same).
 */
export function MetadataPanel({
  run,
  suffix,
  client = null,
  apiKey = null,
  compact = false,
}: {
  run: RunState;
  suffix?: string;
  client?: ApiClient | null;
  apiKey?: string | null;
  /** In a comparison column: the same facts as a few wrapped lines of small type. */
  compact?: boolean;
}) {
  const failedId = run.status === "error" ? (run.error?.runId ?? run.runId) : null;
  const record = useQuery({
    queryKey: queryKeys.run(apiKey ?? "", failedId ?? ""),
    queryFn: ({ signal }) => client!.getRun(failedId!, signal),
    enabled: failedId !== null && client !== null && apiKey !== null,
  });
  const m = run.metadata ?? (failedId && record.data ? record.data.metadata : null);
  const rows: [string, React.ReactNode][] = [
    [
      "Run id",
      (run.runId ?? failedId) ? (
        <span className="flex flex-wrap items-center gap-x-2 gap-y-1">
          <Link href={`/runs/${run.runId ?? failedId}`} className="font-mono break-all text-blue-700 underline dark:text-blue-400">
            {run.runId ?? failedId}
          </Link>
          <button type="button" className="rounded border border-zinc-300 px-1 text-xs dark:border-zinc-700" onClick={() => void navigator.clipboard?.writeText((run.runId ?? failedId)!)}>
            Copy run id
          </button>
        </span>
      ) : (
        "—"
      ),
    ],
    ["Model", m ? `${m.model.name || "—"} (${m.model.tag})` : "—"],
    ["Input tokens", m ? String(m.inputTokens) : "—"],
    ["Output tokens", m ? String(m.outputTokens) : "—"],
    ["Cost", m ? formatUsd(m.cost) : "—"],
    ["Duration", m ? formatDuration(m.durationInMs) : run.status === "running" ? "running…" : "—"],
    ["Time to first item", run.operation === "stream-object" ? ms(run.startedAt, run.firstItemAt) : "—"],
  ];
  const title = suffix ? `Run metadata ${suffix}` : "Run metadata";
  if (compact) {
    return (
      <Panel aria-label={title} className="px-2 py-1.5">
        <h3 className="sr-only">{title}</h3>
        <dl className="flex flex-wrap gap-x-3 gap-y-0.5 text-xs">
          {rows.map(([label, value]) => (
            <div key={label} className="flex min-w-0 gap-1">
              <dt className="shrink-0 text-zinc-600 dark:text-zinc-400">{label}</dt>
              <dd className="min-w-0 [overflow-wrap:anywhere]" data-testid={`meta-${label.toLowerCase().replace(/[^a-z]+/g, "-")}`}>
                {value}
              </dd>
            </div>
          ))}
        </dl>
      </Panel>
    );
  }
  return (
    <Panel aria-label={title}>
      <h2 className="text-lg font-semibold">{title}</h2>
      <dl className="mt-2 grid grid-cols-[max-content_minmax(0,1fr)] gap-x-4 gap-y-1 text-sm">
        {rows.map(([label, value]) => (
          <div key={label} className="contents">
            <dt className="text-zinc-600 dark:text-zinc-400">{label}</dt>
            <dd data-testid={`meta-${label.toLowerCase().replace(/[^a-z]+/g, "-")}`}>{value}</dd>
          </div>
        ))}
      </dl>
    </Panel>
  );
}
