"use client";

import { useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import type { ApiClient, UsageReport } from "@/lib/client/api";
import { queryKeys } from "@/lib/client/query-keys";
import { RequireKey } from "../require-key";
import { useTheme } from "../theme";
import { Field, Select } from "../ui/field";
import { ErrorAlert, Panel } from "../ui/panel";
import { TableHead } from "../ui/table-head";
import { UsageChart } from "./usage-chart";
import { Page } from "../ui/page";
import { ScrollTable } from "../ui/scroll-table";

const RANGES = { "24h": { label: "Last 24 hours", ms: 86_400_000 }, "7d": { label: "Last 7 days", ms: 7 * 86_400_000 }, "30d": { label: "Last 30 days", ms: 30 * 86_400_000 } } as const;
type Range = keyof typeof RANGES;
const td = "py-1.5 pr-3 align-top tabular-nums";

export function UsagePage() {
  return <RequireKey>{(client, apiKey) => <Usage client={client} apiKey={apiKey} />}</RequireKey>;
}

function Usage({ client, apiKey }: { client: ApiClient; apiKey: string }) {
  const { dark } = useTheme();
  const [range, setRange] = useState<Range>("7d");
  const [groupBy, setGroupBy] = useState<UsageReport["groupBy"]>("workflow");
  // Admin and viewer keys read their project's usage; an editor its own key's.
  const role = useQuery({ queryKey: queryKeys.me(apiKey), queryFn: ({ signal }) => client.me(signal) }).data?.role;
  const wholeProject = role === "admin" || role === "viewer";
  // The range ends at the current minute, so that the query key (and the cache) holds for a minute.
  const minute = Math.floor(Date.now() / 60_000) * 60_000;
  const params = useMemo(() => ({ from: new Date(minute - RANGES[range].ms).toISOString(), groupBy }), [minute, range, groupBy]);
  const report = useQuery({ queryKey: queryKeys.usage(apiKey, params), queryFn: ({ signal }) => client.usage(params, signal), refetchInterval: 30_000 });
  const totals = report.data?.groups.reduce((t, g) => ({ runs: t.runs + g.runs, errors: t.errors + g.errors, cost: t.cost + Number(g.costUsd) }), { runs: 0, errors: 0, cost: 0 });
  return (
    <Page>
      <h1 className="text-2xl font-semibold">Usage</h1>
      <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">{wholeProject ? "Every finished run of this project's keys." : "This key's finished runs."}</p>
      <div className="mt-4 flex flex-wrap gap-4">
        <Field id="usage-range" label="Period">
          <Select id="usage-range" compact value={range} onChange={(e) => setRange(e.target.value as Range)}>
            {Object.entries(RANGES).map(([value, r]) => (
              <option key={value} value={value}>
                {r.label}
              </option>
            ))}
          </Select>
        </Field>
        <Field id="usage-group" label="Group by">
          <Select id="usage-group" compact value={groupBy} onChange={(e) => setGroupBy(e.target.value as UsageReport["groupBy"])}>
            <option value="workflow">Workflow</option>
            <option value="model">Model</option>
            {wholeProject ? <option value="key">Key</option> : null}
          </Select>
        </Field>
      </div>
      {report.error ? (
        <div className="mt-4">
          <ErrorAlert>{(report.error as Error).message}</ErrorAlert>
        </div>
      ) : null}
      {totals ? (
        <dl className="mt-4 grid grid-cols-3 gap-3 text-sm">
          {[
            ["Runs", totals.runs.toLocaleString()],
            ["Errors", `${totals.errors.toLocaleString()}${totals.runs ? ` (${((totals.errors / totals.runs) * 100).toFixed(1)}%)` : ""}`],
            ["Cost", `$${totals.cost.toFixed(9).replace(/\.?0+$/, "")}`],
          ].map(([term, value]) => (
            <div key={term} className="rounded border border-zinc-200 p-3 dark:border-zinc-800">
              <dt className="text-zinc-600 dark:text-zinc-400">{term}</dt>
              <dd className="text-lg font-semibold" data-testid={`usage-total-${term!.toLowerCase()}`}>
                {value}
              </dd>
            </div>
          ))}
        </dl>
      ) : null}
      {report.data ? (
        <Panel className="mt-4" aria-labelledby="usage-chart">
          <h2 id="usage-chart" className="mb-2 font-medium">
            Runs and cost per {report.data.bucket}
          </h2>
          {report.data.series.length === 0 ? <p className="text-sm">No finished runs in this period.</p> : <UsageChart report={report.data} dark={dark} />}
        </Panel>
      ) : null}
      {report.data && report.data.groups.length > 0 ? (
        <div className="mt-4 overflow-x-auto">
          <ScrollTable className="w-full text-left text-sm">
            <TableHead columns={[groupBy === "workflow" ? "Workflow" : groupBy === "model" ? "Model" : "Key", "Runs", "Errors", "Input tokens", "Output tokens", "Cost (USD)", "p50", "p95"]} />
            <tbody>
              {report.data.groups.map((g) => (
                <tr key={g.group} className="border-b border-zinc-100 dark:border-zinc-900">
                  <td className="py-1.5 pr-3 font-mono">{g.group || "—"}</td>
                  <td className={td}>{g.runs.toLocaleString()}</td>
                  <td className={td}>{g.errors.toLocaleString()}</td>
                  <td className={td}>{g.inputTokens.toLocaleString()}</td>
                  <td className={td}>{g.outputTokens.toLocaleString()}</td>
                  <td className={td}>{g.costUsd}</td>
                  <td className={td}>{g.durationMsP50 === null ? "—" : `${g.durationMsP50} ms`}</td>
                  <td className={td}>{g.durationMsP95 === null ? "—" : `${g.durationMsP95} ms`}</td>
                </tr>
              ))}
            </tbody>
          </ScrollTable>
        </div>
      ) : null}
    </Page>
  );
}
