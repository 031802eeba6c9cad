"use client";

import type { WorkflowSummary } from "@/lib/client/api";
import { OPERATIONS, type Composition } from "@/lib/client/composition";
import { Button } from "../ui/button";
import { Field, Select } from "../ui/field";

export type CopyTarget = "curl" | "fetch" | "link";

/** Run and cancel, compare, copy the request (curl, fetch, permalink), and recent compositions. */
export function RunBar(props: {
  canRun: boolean;
  running: boolean;
  onCancel(): void;
  compareWith: string;
  onCompareWith(value: string): void;
  workflows: WorkflowSummary[] | undefined;
  copied: CopyTarget | null;
  onCopy(what: CopyTarget): void;
  history: Composition[];
  onRestore(c: Composition): void;
}) {
  return (
    <>
      <div className="flex flex-wrap items-center gap-2">
        <Button type="submit" variant="primary" size="lg" disabled={!props.canRun}>
          Run
        </Button>
        {props.running ? <Button onClick={props.onCancel}>Cancel</Button> : null}
        <span className="text-xs text-zinc-600 dark:text-zinc-400">Ctrl/⌘+Enter runs · Esc cancels</span>
        <label htmlFor="compare" className="text-sm">
          Compare with
        </label>
        <Select id="compare" compact value={props.compareWith} onChange={(e) => props.onCompareWith(e.target.value)}>
          <option value="">nothing</option>
          <option value="(same)">the same workflow again</option>
          {props.workflows?.map((w) => (
            <option key={w.slug} value={w.slug}>
              {w.slug}
            </option>
          ))}
        </Select>
        <span className="ml-auto flex flex-wrap gap-2">
          {(["curl", "fetch", "link"] as const).map((what) => (
            <Button key={what} onClick={() => props.onCopy(what)}>
              {props.copied === what ? "Copied" : what === "link" ? "Copy permalink" : `Copy as ${what}`}
            </Button>
          ))}
        </span>
      </div>
      {props.history.length > 0 ? (
        <Field id="history" label="Recent compositions">
          <Select
            id="history"
            value=""
            onChange={(e) => {
              const restored = props.history[Number(e.target.value)];
              if (restored) props.onRestore(restored);
            }}
          >
            <option value="">Restore…</option>
            {props.history.map((h, i) => (
              <option key={i} value={i}>
                {OPERATIONS.find((o) => o.value === h.operation)?.label} · {h.workflowSlug} · {h.input.length > 40 ? `${h.input.slice(0, 40)}…` : h.input}
              </option>
            ))}
          </Select>
        </Field>
      ) : null}
    </>
  );
}
