"use client";

import Link from "next/link";
import type { RunState } from "./use-run";
import { Panel } from "../ui/panel";

const ms = (a: number | null, b: number | null) => (a !== null && b !== null ? `${Math.round(b - a)} ms` : "—");

/** Run id, model, tokens, cost and timings; filled in as the run progresses and when it ends. */
export function MetadataPanel({ run, suffix }: { run: RunState; suffix?: string }) {
  const m = run.metadata;
  const rows: [string, React.ReactNode][] = [
    [
      "Run id",
      run.runId ? (
        <span className="flex items-center gap-2">
          <Link href={`/runs/${run.runId}`} className="font-mono text-blue-700 underline dark:text-blue-400">
            {run.runId}
          </Link>
          <button type="button" className="rounded border border-zinc-300 px-1 text-xs dark:border-zinc-700" onClick={() => void navigator.clipboard?.writeText(run.runId!)}>
            Copy run id
          </button>
        </span>
      ) : (
        "—"
      ),
    ],
    ["Model", m ? `${m.model.name} (${m.model.tag})` : "—"],
    ["Input tokens", m ? String(m.inputTokens) : "—"],
    ["Output tokens", m ? String(m.outputTokens) : "—"],
    ["Cost (USD)", m ? m.cost : "—"],
    ["Duration", m ? `${m.durationInMs} ms` : run.status === "running" ? "running…" : "—"],
    ["Time to first item", run.operation === "stream-object" ? ms(run.startedAt, run.firstItemAt) : "—"],
  ];
  return (
    <Panel aria-label={suffix ? `Run metadata ${suffix}` : "Run metadata"}>
      <h2 className="text-lg font-semibold">{suffix ? `Run metadata ${suffix}` : "Run metadata"}</h2>
      <dl className="mt-2 grid grid-cols-[max-content_1fr] gap-x-4 gap-y-1 text-sm">
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
