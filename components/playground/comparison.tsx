"use client";

import { TableHead } from "../ui/table-head";
import { diffJson } from "@/lib/json/diff";
import type { RunState } from "./use-run";
import { Panel } from "../ui/panel";

const output = (run: RunState) => (run.operation === "generate-text" ? run.text : run.object);

/** Two finished runs side by side: a field-by-field diff and the cost, latency and token deltas. */
export function Comparison({ a, b }: { a: RunState; b: RunState }) {
  if (a.status !== "done" || b.status !== "done" || !a.metadata || !b.metadata) {
    return (
      <Panel aria-label="Comparison" className="text-sm">
        <h2 className="text-lg font-semibold">Comparison</h2>
        <p className="mt-2">{a.status === "running" || b.status === "running" ? "Waiting for both runs to finish…" : "Both runs must succeed to compare them."}</p>
      </Panel>
    );
  }
  const differences = diffJson(output(a), output(b));
  const delta = (x: number, y: number, unit = "") => `${y - x > 0 ? "+" : ""}${Math.round((y - x) * 1e7) / 1e7}${unit}`;
  return (
    <Panel aria-label="Comparison" className="text-sm">
      <h2 className="text-lg font-semibold">Comparison</h2>
      <dl className="mt-2 grid grid-cols-[max-content_1fr] gap-x-4 gap-y-1">
        <dt>Cost (B − A)</dt>
        <dd data-testid="delta-cost">{delta(Number(a.metadata.cost), Number(b.metadata.cost), " USD")}</dd>
        <dt>Duration (B − A)</dt>
        <dd>{delta(a.metadata.durationInMs, b.metadata.durationInMs, " ms")}</dd>
        <dt>Input tokens (B − A)</dt>
        <dd>{delta(a.metadata.inputTokens, b.metadata.inputTokens)}</dd>
        <dt>Output tokens (B − A)</dt>
        <dd>{delta(a.metadata.outputTokens, b.metadata.outputTokens)}</dd>
      </dl>
      {differences.length === 0 ? (
        <p className="mt-3">The two outputs are identical.</p>
      ) : (
        <table className="mt-3 w-full text-left font-mono text-xs">
          <caption className="mb-1 text-left font-sans text-sm">
            {differences.length} field{differences.length === 1 ? "" : "s"} differ
          </caption>
          <TableHead columns={["Field", "Change", "A", "B"]} />
          <tbody>
            {differences.map((d) => (
              <tr key={d.path} className="border-b border-zinc-100 align-top dark:border-zinc-900">
                <td className="py-1 pr-3">{d.path}</td>
                <td className="py-1 pr-3">{d.kind}</td>
                <td className="py-1 pr-3 break-all">{d.kind === "added" ? "—" : JSON.stringify(d.left)}</td>
                <td className="py-1 break-all">{d.kind === "removed" ? "—" : JSON.stringify(d.right)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Panel>
  );
}
