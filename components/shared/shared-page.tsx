"use client";

import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import type { SharedView } from "@/lib/api/lifecycle-shapes";
import { formatDuration, formatUsd } from "@/lib/client/format";
import { Badge, statusTone } from "../ui/badge";
import { Button } from "../ui/button";
import { Panel } from "../ui/panel";
import { TableHead } from "../ui/table-head";
import { ScrollTable } from "../ui/scroll-table";
import { DraftPanel } from "../runs/draft-panel";

/** A share link's page: a run or an evaluation report, read without a key. */
export function SharedPage({ token }: { token: string }) {
  const view = useQuery({
    queryKey: ["shared", token],
    queryFn: async ({ signal }) => {
      const response = await fetch(`/api/v1/shared/${encodeURIComponent(token)}`, { signal });
      if (response.status === 404) throw new Error("This link does not exist, has expired or was revoked.");
      if (!response.ok) throw new Error(`The link could not be read (${response.status}).`);
      return (await response.json()) as SharedView;
    },
    retry: false,
  });
  if (view.isLoading) return <main className="px-4 py-6">Loading…</main>;
  if (view.error || !view.data)
    return (
      <main className="mx-auto max-w-3xl px-4 py-10">
        <h1 className="text-2xl font-semibold">Shared link</h1>
        <p role="alert" className="mt-3 text-red-700 dark:text-red-400">
          {(view.error as Error)?.message}
        </p>
      </main>
    );
  const data = view.data;
  return (
    <main className="mx-auto max-w-5xl px-4 py-6">
      {data.run && <SharedRun run={data.run} hidden={data.hiddenFields} />}
      {data.evaluation && <SharedEvaluation report={data.evaluation} />}
      <p className="mt-6 text-xs text-zinc-600 dark:text-zinc-400">
        Read-only link{data.expiresAt ? `, valid until ${new Date(data.expiresAt).toLocaleString()}` : ""}.{" "}
        {data.hiddenFields.length > 0 && `Hidden by its owner: ${data.hiddenFields.join(", ")}.`}
      </p>
    </main>
  );
}

const block = "mt-2 overflow-auto rounded bg-zinc-50 p-3 font-mono text-sm whitespace-pre-wrap break-words dark:bg-zinc-900";

function SharedRun({ run, hidden }: { run: NonNullable<SharedView["run"]>; hidden: string[] }) {
  const final = run.output === null ? "" : typeof run.output === "string" ? run.output : JSON.stringify(run.output, null, 2);
  const [shown, setShown] = useState<string | null>(null);
  const [playing, setPlaying] = useState(false);

  // Replays the output at the pace its characters arrived (the raw text's share, applied to the shown text).
  useEffect(() => {
    if (!playing || !run.pace || run.pace.length === 0) return;
    const total = run.pace.at(-1)![1] || 1;
    const start = run.pace[0]![0];
    const timers = run.pace.map(([t, n]) => setTimeout(() => setShown(final.slice(0, Math.round((n / total) * final.length))), t - start));
    timers.push(setTimeout(() => (setShown(null), setPlaying(false)), run.pace.at(-1)![0] - start + 400));
    return () => timers.forEach(clearTimeout);
  }, [playing, run.pace, final]);

  return (
    <>
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="text-2xl font-semibold">
          {run.workflowSlug}
          {run.workflowVersion && run.workflowVersion !== "config" ? `@${run.workflowVersion}` : ""}
        </h1>
        <Badge tone={statusTone(run.status)}>{run.status}</Badge>
        {run.draft ? <Badge tone="info">draft</Badge> : null}
        <span className="text-sm text-zinc-600 dark:text-zinc-400">{run.operation}</span>
      </div>
      <dl className="mt-3 grid grid-cols-2 gap-x-6 gap-y-1 text-sm sm:grid-cols-4">
        <Meta term="Model" value={run.model ?? "—"} />
        <Meta term="Duration" value={formatDuration(run.durationMs)} />
        <Meta term="Tokens" value={`${run.inputTokens} in · ${run.outputTokens} out`} />
        <Meta term="Cost" value={formatUsd(run.cost)} />
      </dl>
      <div className="mt-5 grid gap-4 lg:grid-cols-2">
        <Panel>
          <h2 className="font-medium">Input</h2>
          <pre className={block}>{run.input}</pre>
          {run.attachments.length > 0 && <p className="mt-2 text-xs">{run.attachments.map((a) => `${a.mimeType} (${a.bytes} bytes)`).join(", ")}</p>}
        </Panel>
        <Panel>
          <div className="flex items-center justify-between gap-2">
            <h2 className="font-medium">Output</h2>
            {run.pace && run.pace.length > 0 && (
              <Button size="sm" onClick={() => (setShown(""), setPlaying(true))} disabled={playing}>
                {playing ? "Replaying…" : "Replay the stream"}
              </Button>
            )}
          </div>
          {run.error ? (
            <p role="alert" className="mt-2 text-red-700 dark:text-red-400">
              {run.error.title}: {run.error.detail}
            </p>
          ) : (
            <pre className={block} aria-live={playing ? "polite" : undefined} data-testid="shared-output">
              {shown ?? final}
              {playing && <span className="animate-pulse">▍</span>}
            </pre>
          )}
          {hidden.length > 0 && <p className="mt-2 text-xs text-zinc-600 dark:text-zinc-400">Fields shown as [hidden] were masked by the run&apos;s owner.</p>}
        </Panel>
      </div>
      {run.draft ? <DraftPanel draft={run.draft} slug={run.workflowSlug} /> : null}
    </>
  );
}

function Meta({ term, value }: { term: string; value: string }) {
  return (
    <div>
      <dt className="text-xs text-zinc-600 dark:text-zinc-400">{term}</dt>
      <dd>{value}</dd>
    </div>
  );
}

function SharedEvaluation({ report }: { report: NonNullable<SharedView["evaluation"]> }) {
  const rate = report.totals.passRate === null ? "—" : `${Math.round(report.totals.passRate * 100)}%`;
  return (
    <>
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="text-2xl font-semibold">Suite {report.suite}</h1>
        <Badge tone={report.status === "completed" ? "success" : "neutral"}>{report.status}</Badge>
        <span className="text-sm">
          on {report.target.workflowSlug}
          {report.target.model ? ` · ${report.target.model}` : ""}
        </span>
      </div>
      <p className="mt-2 text-lg">
        Pass rate <strong>{rate}</strong> · {report.totals.casesPassed} of {report.totals.cases} cases · {formatUsd(report.totals.costUsd)}
      </p>
      <ScrollTable className="mt-4 w-full text-sm">
        <TableHead columns={["Case", "Result", "Checks"]} />
        <tbody>
          {report.cases.map((c) => (
            <tr key={c.index} className="border-t border-zinc-200 dark:border-zinc-800">
              <td className="py-1.5 pr-3">{c.name}</td>
              <td className="pr-3">{c.passed === c.runs.length ? "passed" : `${c.passed}/${c.runs.length} passed`}</td>
              <td className="break-words">
                {c.runs[0]?.checks
                  .filter((k) => !k.pass)
                  .map((k) => `${k.path}: ${k.reason ?? k.check}`)
                  .join("; ") || "all held"}
              </td>
            </tr>
          ))}
        </tbody>
      </ScrollTable>
    </>
  );
}
