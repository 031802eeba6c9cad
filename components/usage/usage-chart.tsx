"use client";

import { Bar, CartesianGrid, ComposedChart, Legend, Line, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { UsageReport } from "@/lib/client/api";

const label = (at: string, bucket: UsageReport["bucket"]) => {
  const d = new Date(at);
  return bucket === "hour" ? d.toLocaleString(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" }) : d.toLocaleDateString(undefined, { month: "short", day: "numeric" });
};

/** Runs (bars; those that did not succeed — failed or cancelled, the report's `errors` — stacked on top) and cost (a line, right axis) per hour or day. */
export function UsageChart({ report, dark }: { report: UsageReport; dark: boolean }) {
  const data = report.series.map((s) => ({ at: label(s.at, report.bucket), succeeded: s.runs - s.errors, failed: s.errors, cost: Number(s.costUsd) }));
  const ink = dark ? "#d4d4d8" : "#3f3f46";
  const grid = dark ? "#3f3f46" : "#e4e4e7";
  return (
    <div className="h-72 w-full" role="img" aria-label={`Runs and cost per ${report.bucket}: ${data.length} ${report.bucket}s with runs`}>
      <ResponsiveContainer width="100%" height="100%">
        <ComposedChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid stroke={grid} strokeDasharray="3 3" />
          <XAxis dataKey="at" tick={{ fill: ink, fontSize: 12 }} />
          <YAxis yAxisId="runs" allowDecimals={false} tick={{ fill: ink, fontSize: 12 }} label={{ value: "runs", angle: -90, position: "insideLeft", fill: ink, fontSize: 12 }} />
          <YAxis yAxisId="cost" orientation="right" width={88} tick={{ fill: ink, fontSize: 12 }} tickFormatter={(v: number) => `$${Number(v.toPrecision(2))}`} />
          <Tooltip contentStyle={{ background: dark ? "#18181b" : "#fff", borderColor: grid, color: ink }} formatter={(value, name) => (name === "cost" ? [`$${Number(value).toFixed(6)}`, "cost"] : [value, name])} />
          <Legend wrapperStyle={{ color: ink, fontSize: 12 }} />
          <Bar yAxisId="runs" dataKey="succeeded" stackId="runs" fill="#1d4ed8" maxBarSize={48} isAnimationActive={false} />
          <Bar yAxisId="runs" dataKey="failed" name="failed or cancelled" stackId="runs" fill="#b91c1c" maxBarSize={48} isAnimationActive={false} />
          <Line yAxisId="cost" dataKey="cost" type="monotone" stroke="#d97706" strokeWidth={2} dot={false} isAnimationActive={false} />
        </ComposedChart>
      </ResponsiveContainer>
    </div>
  );
}
