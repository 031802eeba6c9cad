"use client";

import Link from "next/link";
import type { EvaluationReport } from "@/lib/client/api";
import { formatDuration, formatUsd } from "@/lib/client/format";
import { Badge, type BadgeTone } from "../ui/badge";
import { Button } from "../ui/button";
import { Panel } from "../ui/panel";
import { ScrollTable } from "../ui/scroll-table";

type CaseResult = EvaluationReport["cases"][number];
type CaseRun = CaseResult["runs"][number];

const pct = (rate: number | null) => (rate === null ? "–" : `${Math.round(rate * 1000) / 10}%`);
const show = (value: unknown) => (value === undefined ? "(missing)" : JSON.stringify(value));
const statusTone = (status: EvaluationReport["status"]): BadgeTone =>
  status === "completed" ? "success" : status === "failed" ? "danger" : status === "cancelled" ? "warning" : "info";

/** A pass rate as a cell's background: red through amber to green. */
function heat(rate: number | null): string {
  if (rate === null) return "bg-zinc-100 dark:bg-zinc-800";
  if (rate >= 1) return "bg-green-200 text-green-950 dark:bg-green-900 dark:text-green-50";
  if (rate >= 0.75) return "bg-lime-200 text-lime-950 dark:bg-lime-900 dark:text-lime-50";
  if (rate >= 0.5) return "bg-amber-200 text-amber-950 dark:bg-amber-900 dark:text-amber-50";
  return "bg-red-200 text-red-950 dark:bg-red-900 dark:text-red-50";
}

/** What a cell says on hover: each repeat's checks on the field, with the value and expectation. */
function cellTitle(runs: CaseRun[], path: string): string {
  return runs
    .map((run) => {
      if (run.status === "error") return `repeat ${run.repeat + 1}: the run failed (${run.error?.code ?? "error"})`;
      const checks = run.checks.filter((c) => c.path === path);
      return `repeat ${run.repeat + 1}: ${checks.map((c) => `${c.check} ${c.pass ? "✓" : "✗"} expected ${show(c.expected)}, got ${show(c.actual)}${c.reason && !c.pass ? ` — ${c.reason}` : ""}`).join("; ")}`;
    })
    .join("\n");
}

/**
 * What a cell shows in the table itself (not only on hover): expected and actual of the field's
 * check in one run — a failing repeat's if there is one — and that run, for its link.
 */
function cellRun(runs: CaseRun[], path: string): { run: CaseRun; check: CaseRun["checks"][number] | undefined } | undefined {
  const failing = runs.find((r) => r.checks.some((c) => c.path === path && !c.pass));
  const run = failing ?? runs[0];
  if (!run) return undefined;
  const checks = run.checks.filter((c) => c.path === path);
  return { run, check: checks.find((c) => !c.pass) ?? checks[0] };
}

/** An evaluation as it runs and after: totals, the cases × fields matrix, the per-field heat row, the baseline diff. */
export function EvaluationView({ report, onCancel }: { report: EvaluationReport; onCancel?: () => void }) {
  const t = report.totals;
  const running = report.status === "queued" || report.status === "running";
  const paths = report.fields.map((f) => f.path);
  return (
    <Panel aria-label="Evaluation" className="space-y-3">
      <div className="flex flex-wrap items-center gap-2 text-sm">
        <h3 className="font-semibold">
          Evaluation <code className="font-mono text-xs">{report.id}</code>
        </h3>
        <Badge tone={statusTone(report.status)}>{report.status}</Badge>
        <span>
          {report.target.workflowSlug}
          {report.target.model ? ` · model ${report.target.model}` : ""} · suite v{report.suiteVersion} · ×{report.target.repeat}
        </span>
        {running && onCancel ? (
          <Button size="sm" variant="danger" onClick={onCancel}>
            Cancel
          </Button>
        ) : null}
      </div>
      <div role="status" aria-live="polite" className="flex flex-wrap gap-2 text-sm">
        <Badge>
          {t.done}/{t.runs} runs
        </Badge>
        <Badge tone={t.passRate === 1 ? "success" : t.passRate === null ? "neutral" : "warning"}>pass rate {pct(t.passRate)}</Badge>
        <Badge>
          cases passed {t.casesPassed}/{t.cases}
        </Badge>
        {t.errors > 0 ? <Badge tone="danger">{t.errors} failed runs</Badge> : null}
        {t.judged.passed + t.judged.failed > 0 ? (
          <Badge tone="info">
            judged {t.judged.passed}/{t.judged.passed + t.judged.failed}
          </Badge>
        ) : null}
        <Badge>{formatUsd(t.costUsd)}</Badge>
        <Badge>
          p50 {formatDuration(t.durationMsP50)} · p95 {formatDuration(t.durationMsP95)}
        </Badge>
      </div>
      {report.error ? (
        <p role="alert" className="text-sm text-red-700 dark:text-red-400">
          {report.error.code}: {report.error.detail}
        </p>
      ) : null}
      <div className="h-1.5 overflow-hidden rounded bg-zinc-200 dark:bg-zinc-800" aria-hidden>
        <div className="h-full bg-blue-600 transition-all" style={{ width: `${t.runs ? (t.done / t.runs) * 100 : 0}%` }} />
      </div>
      <div className="overflow-x-auto">
        <ScrollTable className="w-full border-collapse text-left text-sm" aria-label="Cases by field">
          <thead>
            <tr className="border-b border-zinc-300 dark:border-zinc-700">
              <th className="py-1.5 pr-3">Case</th>
              <th className="py-1.5 pr-3">Runs</th>
              {paths.map((path) => (
                <th key={path} className="py-1.5 pr-3 font-mono text-xs">
                  {path || "(output)"}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {report.cases.map((c) => (
              <tr key={c.index} className="border-b border-zinc-100 dark:border-zinc-800">
                <th scope="row" className="max-w-64 py-1 pr-3 font-normal break-words">
                  {c.name}
                  {!c.stable ? (
                    <Badge tone="warning" className="ml-1 text-xs">
                      unstable
                    </Badge>
                  ) : null}
                </th>
                <td className="py-1 pr-3 whitespace-nowrap">
                  {c.runs.length === 0 ? (
                    <span className="text-zinc-600 dark:text-zinc-400">pending</span>
                  ) : (
                    c.runs.map((run) => (
                      <span key={run.repeat} className="mr-1">
                        {run.runId ? (
                          <Link href={`/runs/${run.runId}`} title={run.error ? `${run.error.code}: ${run.error.detail}` : `${run.status}, ${formatDuration(run.durationMs)}`} className="underline-offset-2 hover:underline">
                            <Badge tone={run.status === "passed" ? "success" : "danger"}>{run.status}</Badge>
                          </Link>
                        ) : (
                          <Badge tone="danger">{run.status}</Badge>
                        )}
                      </span>
                    ))
                  )}
                </td>
                {paths.map((path) => {
                  const field = c.fields.find((f) => f.path === path);
                  if (!field) return <td key={path} className="py-1 pr-3 text-zinc-400" />;
                  const shown = cellRun(c.runs, path);
                  const verdict = (
                    <span title={cellTitle(c.runs, path)} className={`inline-block min-w-12 rounded px-1 text-center text-xs ${heat(field.passRate)}`} data-testid={`cell-${c.index}-${path}`}>
                      {field.checks === 0 ? "…" : field.passRate === 1 ? "✓" : field.passRate === 0 ? "✗" : pct(field.passRate)}
                    </span>
                  );
                  const detail = shown?.check ? (
                    <span className="mt-0.5 block max-w-56 truncate font-mono text-[11px] text-zinc-700 dark:text-zinc-300" data-testid={`cell-detail-${c.index}-${path}`}>
                      {shown.check.pass ? show(shown.check.actual) : `expected ${show(shown.check.expected)} · got ${show(shown.check.actual)}`}
                    </span>
                  ) : null;
                  return (
                    <td key={path} className="py-1 pr-3 align-top">
                      {shown?.run.runId ? (
                        // The cell is a way into the run it shows (a failing repeat first).
                        <Link href={`/runs/${shown.run.runId}`} aria-label={`${c.name} ${path || "(output)"}: ${cellTitle([shown.run], path)}`} className="block rounded underline-offset-2 hover:underline">
                          {verdict}
                          {detail}
                        </Link>
                      ) : (
                        <>
                          {verdict}
                          {detail}
                        </>
                      )}
                    </td>
                  );
                })}
              </tr>
            ))}
            <tr>
              <th scope="row" className="py-1.5 pr-3 text-left">
                Field pass rate
              </th>
              <td />
              {report.fields.map((f) => (
                <td key={f.path} className="py-1.5 pr-3">
                  <span className={`inline-block min-w-12 rounded px-1 text-center text-xs font-semibold ${heat(f.passRate)}`}>{pct(f.passRate)}</span>
                </td>
              ))}
            </tr>
          </tbody>
        </ScrollTable>
      </div>
      {report.baseline ? (
        <section aria-label="Against the baseline" className="text-sm">
          <h4 className="font-semibold">
            Against <code className="font-mono text-xs">{report.baseline.id}</code>
          </h4>
          <p>
            pass rate {report.baseline.passRateDelta === null ? "–" : `${report.baseline.passRateDelta >= 0 ? "+" : ""}${Math.round(report.baseline.passRateDelta * 1000) / 10} pts`} · cost Δ {formatUsd(report.baseline.costDeltaUsd)} · p50 Δ{" "}
            {report.baseline.durationMsP50Delta === null ? "–" : `${report.baseline.durationMsP50Delta >= 0 ? "+" : "-"}${formatDuration(Math.abs(report.baseline.durationMsP50Delta))}`}
          </p>
          {report.baseline.newlyFailing.length > 0 ? (
            <p className="text-red-700 dark:text-red-400">
              Newly failing: {report.baseline.newlyFailing.map((c) => `${c.case}${c.paths.length ? ` (${c.paths.join(", ")})` : ""}`).join("; ")}
            </p>
          ) : null}
          {report.baseline.newlyPassing.length > 0 ? <p className="text-green-800 dark:text-green-300">Newly passing: {report.baseline.newlyPassing.join("; ")}</p> : null}
          {report.baseline.changed.length > 0 ? (
            <ul className="mt-1 list-inside list-disc">
              {report.baseline.changed.slice(0, 50).map((c, i) => (
                <li key={i} className="break-words">
                  {c.case} <code className="font-mono">{c.path || "(output)"}</code>: {show(c.before)} → {show(c.after)}
                </li>
              ))}
            </ul>
          ) : null}
        </section>
      ) : null}
    </Panel>
  );
}

/** Two evaluations side by side: totals, cost and latency, and each case's pass rate in both. */
export function EvaluationComparison({ a, b }: { a: EvaluationReport; b: EvaluationReport }) {
  const label = (r: EvaluationReport) => `${r.target.workflowSlug}${r.target.model ? ` · ${r.target.model}` : ""} (${r.id.slice(-6)})`;
  const names = [...new Set([...a.cases.map((c) => c.name), ...b.cases.map((c) => c.name)])];
  const latency = (r: EvaluationReport) => `${formatDuration(r.totals.durationMsP50)} / ${formatDuration(r.totals.durationMsP95)}`;
  const rate = (r: EvaluationReport, name: string) => r.cases.find((c) => c.name === name)?.passRate ?? null;
  return (
    <Panel aria-label="Comparison of two evaluations">
      <ScrollTable className="w-full text-left text-sm">
        <thead>
          <tr className="border-b border-zinc-300 dark:border-zinc-700">
            <th className="py-1.5 pr-3" />
            <th className="py-1.5 pr-3">{label(a)}</th>
            <th className="py-1.5 pr-3">{label(b)}</th>
          </tr>
        </thead>
        <tbody>
          {[
            ["pass rate", pct(a.totals.passRate), pct(b.totals.passRate)],
            ["cost", formatUsd(a.totals.costUsd), formatUsd(b.totals.costUsd)],
            ["p50 / p95", latency(a), latency(b)],
          ].map(([k, x, y]) => (
            <tr key={k} className="border-b border-zinc-100 dark:border-zinc-800">
              <th scope="row" className="py-1 pr-3 font-medium">
                {k}
              </th>
              <td className="py-1 pr-3">{x}</td>
              <td className="py-1 pr-3">{y}</td>
            </tr>
          ))}
          {names.map((name) => (
            <tr key={name} className="border-b border-zinc-100 dark:border-zinc-800">
              <th scope="row" className="py-1 pr-3 font-normal break-words">
                {name}
              </th>
              {[a, b].map((r) => (
                <td key={r.id} className="py-1 pr-3">
                  <span className={`inline-block min-w-12 rounded px-1 text-center text-xs ${heat(rate(r, name))}`}>{pct(rate(r, name))}</span>
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </ScrollTable>
    </Panel>
  );
}
