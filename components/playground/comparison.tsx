"use client";

import { useState } from "react";
import { formatDuration } from "@/lib/client/format";
import { diffJson, type Difference } from "@/lib/json/structural-diff";
import { Badge, type BadgeTone } from "../ui/badge";
import type { JsonMark } from "../ui/json-view";
import { Panel } from "../ui/panel";
import { TableHead } from "../ui/table-head";
import type { RunState } from "./use-run";

const output = (run: RunState) => (run.operation === "generate-text" ? run.text : run.object);
const bothDone = (a: RunState, b: RunState) => a.status === "done" && b.status === "done" && a.metadata !== null && b.metadata !== null;

/** Two finished runs compared once: where the outputs differ, and those places marked in each. */
export interface RunComparison {
  differences: Difference[];
  /** Changed in both, removed in A, added in B. */
  marks: { a: Map<string, JsonMark>; b: Map<string, JsonMark> };
}

/** Null until both runs have finished well. */
export function compareRuns(a: RunState, b: RunState): RunComparison | null {
  if (!bothDone(a, b)) return null;
  const differences = diffJson(output(a), output(b));
  const marks = { a: new Map<string, JsonMark>(), b: new Map<string, JsonMark>() };
  for (const d of differences) {
    if (d.kind !== "added") marks.a.set(d.path, { tone: "changed", note: d.kind === "removed" ? "only in A" : `B has ${JSON.stringify(d.right)}` });
    if (d.kind !== "removed") marks.b.set(d.path, { tone: "changed", note: d.kind === "added" ? "only in B" : `A has ${JSON.stringify(d.left)}` });
  }
  return { differences, marks };
}

/** A signed difference with at most 7 decimals ("-0.0000335", "+120"). */
function signed(x: number, y: number): { text: string; sign: number } {
  const d = Math.round((y - x) * 1e7) / 1e7;
  const text = Math.abs(d).toFixed(7).replace(/\.?0+$/, "");
  return { text: `${d > 0 ? "+" : d < 0 ? "-" : "±"}${text}`, sign: Math.sign(d) };
}

/**
 * Two runs of one composition, compared at the top of the results: cost, latency and token deltas
 * (B − A) as chips, and how many fields differ; the differences themselves are marked inside the
 * two outputs below, and listed here on demand.
 */
export function Comparison({ a, b, comparison, name = "B", compact = false }: { a: RunState; b: RunState; comparison: RunComparison | null; name?: string; compact?: boolean }) {
  // The first variant's panel keeps the plain name "Comparison"; the others name their column.
  const region = name === "B" ? "Comparison" : `Comparison ${name}`;
  const [listed, setListed] = useState(false);
  // In a column (compact): no border of its own, small type, the chips wrapping under the heading.
  const Box = compact ? Section : Panel;
  const boxClass = compact ? "mt-2 text-xs" : "text-sm";
  const heading = compact ? "mr-1 text-sm font-semibold" : "mr-2 text-base font-semibold";
  const HeadingTag = compact ? "h3" : "h2";
  if (!comparison) {
    return (
      <Box aria-label={region} className={boxClass}>
        <HeadingTag className={heading}>Comparison ({name} − A)</HeadingTag>
        <p className="mt-1">{a.status === "running" || b.status === "running" ? "Waiting for both runs to finish…" : "Both runs must succeed to compare them."}</p>
      </Box>
    );
  }
  const [ma, mb] = [a.metadata!, b.metadata!];
  const { differences } = comparison;
  const cost = signed(Number(ma.cost), Number(mb.cost));
  const latency = signed(ma.durationInMs, mb.durationInMs);
  const tokens = signed(ma.outputTokens, mb.outputTokens);
  // Lower is better for all three: B cheaper or faster reads green.
  const tone = (sign: number): BadgeTone => (sign < 0 ? "success" : sign > 0 ? "warning" : "neutral");
  return (
    <Box aria-label={region} className={boxClass}>
      <div className={`flex flex-wrap items-center ${compact ? "gap-1" : "gap-2"}`}>
        <HeadingTag className={heading}>Comparison ({name} − A)</HeadingTag>
        <Badge tone={tone(cost.sign)} className={compact ? "px-1.5" : "px-2 py-0.5"}>
          Δ cost <span data-testid="delta-cost">{cost.text.replace(/^([+\-±])/, "$1$")}</span>
        </Badge>
        <Badge tone={tone(latency.sign)} className={compact ? "px-1.5" : "px-2 py-0.5"}>
          Δ latency <span data-testid="delta-latency">{latency.sign === 0 ? "±0 ms" : `${latency.text.slice(0, 1)}${formatDuration(Math.abs(mb.durationInMs - ma.durationInMs))}`}</span>
        </Badge>
        <Badge tone={tone(tokens.sign)} className={compact ? "px-1.5" : "px-2 py-0.5"}>
          Δ output tokens {tokens.text}
        </Badge>
        <Badge tone={differences.length ? "info" : "success"} className={compact ? "px-1.5" : "px-2 py-0.5"}>
          {differences.length === 0 ? "The two outputs are identical." : `${differences.length} field${differences.length === 1 ? "" : "s"} differ, marked below`}
        </Badge>
        {differences.length > 0 ? (
          <button type="button" className="text-blue-700 underline dark:text-blue-400" aria-expanded={listed} onClick={() => setListed(!listed)}>
            {listed ? "Hide the list" : "List them"}
          </button>
        ) : null}
      </div>
      {listed && differences.length > 0 ? (
        <table className="mt-3 w-full table-fixed text-left font-mono text-xs">
          <TableHead columns={["Field", "Change", "A", "B"]} />
          <tbody>
            {differences.map((d) => (
              <tr key={d.path} className="border-b border-zinc-100 align-top dark:border-zinc-900">
                <td className="py-1 pr-3 [overflow-wrap:anywhere]">{d.path}</td>
                <td className="py-1 pr-3">{d.kind}</td>
                <td className="py-1 pr-3 [overflow-wrap:anywhere]">{d.kind === "added" ? "—" : JSON.stringify(d.left)}</td>
                <td className="py-1 [overflow-wrap:anywhere]">{d.kind === "removed" ? "—" : JSON.stringify(d.right)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Box>
  );
}

function Section(props: React.HTMLAttributes<HTMLElement>) {
  return <section {...props} />;
}
