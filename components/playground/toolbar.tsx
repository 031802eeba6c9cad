"use client";

import type { ReactNode } from "react";
import type { WorkflowSummary } from "@/lib/client/api";
import { OPERATIONS, type Composition, type Operation } from "@/lib/client/composition";
import { Button } from "../ui/button";
import { MenuButton, MenuItem } from "../ui/menu-button";
import { Select } from "../ui/field";
import type { Settings } from "./use-composition";

export type CopyTarget = "curl" | "fetch" | "link";
type Update = <K extends keyof Composition>(key: K, value: Composition[K]) => void;

const COPY_LABELS: Record<CopyTarget, string> = { curl: "Copy as curl", fetch: "Copy as fetch", link: "Copy permalink" };

/**
 * The playground's bar, always in view: what runs (operation, workflow), Run and Cancel, the run's
 * status (on narrow screens, where the result may be on the other tab), Compare, and Code.
 */
export function Toolbar(props: {
  c: Settings;
  update: Update;
  workflows: WorkflowSummary[] | undefined;
  canRun: boolean;
  /** Why Run is off though the composition is complete (the workflow's model is unavailable). */
  runBlocked?: string | null;
  running: boolean;
  onCancel(): void;
  status: ReactNode;
  /** The variants compared with the composition (A): B, then C and D. */
  variants: string[];
  onVariants(next: string[]): void;
  /** What a variant can be besides another workflow: the same again, the saved version, versions, other models. */
  variantOptions: { value: string; label: string }[];
  maxVariants: number;
  presenting: boolean;
  onPresent(): void;
  copied: CopyTarget | null;
  onCopy(what: CopyTarget): void;
}) {
  const { c, update, workflows } = props;
  // `slug@4` or `slug@staging` (from "Try this version") is offered as it is.
  const pinned = c.workflowSlug.includes("@") ? c.workflowSlug : null;
  return (
    // A labelled group, not role="toolbar": its controls are reached with Tab, not arrow keys.
    <div role="group" aria-label="Run controls" className="sticky top-0 z-20 border-b border-zinc-200 bg-white/95 backdrop-blur dark:border-zinc-800 dark:bg-zinc-950/95">
      <div className="flex flex-wrap items-center gap-x-3 gap-y-2 px-4 py-2">
        <div className="flex min-w-0 flex-1 basis-full items-center gap-2 sm:basis-auto sm:flex-none">
          <label htmlFor="operation" className="sr-only">
            Operation
          </label>
          <Select id="operation" compact className="min-w-0 flex-1 sm:flex-none" value={c.operation} onChange={(e) => update("operation", e.target.value as Operation)}>
            {OPERATIONS.map((o) => (
              <option key={o.value} value={o.value}>
                {o.label}
              </option>
            ))}
          </Select>
          <label htmlFor="workflow" className="sr-only">
            Workflow
          </label>
          <Select id="workflow" compact className="min-w-0 flex-1 sm:w-64 sm:flex-none" value={c.workflowSlug} onChange={(e) => update("workflowSlug", e.target.value)} aria-describedby="workflow-help workflow-error">
            {workflows?.length === 0 ? <option value="">No workflows configured</option> : null}
            {pinned ? <option value={pinned}>{pinned} (this version)</option> : null}
            {workflows?.map((w) => (
              <option key={w.slug} value={w.slug}>
                {w.slug} ({w.model})
              </option>
            ))}
          </Select>
        </div>
        <Button
          type="submit"
          form="composition"
          variant="primary"
          disabled={!props.canRun}
          aria-keyshortcuts="Control+Enter Meta+Enter"
          aria-describedby={props.runBlocked ? "run-blocked" : undefined}
          className="px-4"
        >
          Run <kbd aria-hidden className="ml-1 font-sans text-xs opacity-80">⌘↵</kbd>
        </Button>
        {props.runBlocked ? (
          <span id="run-blocked" className="text-xs text-amber-900 dark:text-amber-200">
            {props.runBlocked}
          </span>
        ) : null}
        {props.running ? (
          <Button onClick={props.onCancel} aria-keyshortcuts="Escape">
            Cancel
          </Button>
        ) : null}
        <div className="min-w-0 lg:hidden">{props.status}</div>
        <div className="ml-auto flex flex-wrap items-center justify-end gap-2">
          {[...props.variants.length === 0 ? [""] : props.variants].map((variant, i) => {
            const id = i === 0 ? "compare" : `compare-${i}`;
            return (
              <span key={id} className="flex items-center gap-1">
                <label htmlFor={id} className={i === 0 ? "text-sm whitespace-nowrap" : "sr-only"}>
                  {i === 0 ? "Compare with" : `Variant ${"BCD"[i]}`}
                </label>
                <Select
                  id={id}
                  compact
                  className="max-w-36 sm:max-w-48"
                  value={variant}
                  onChange={(e) => {
                    const next = [...props.variants];
                    next[i] = e.target.value;
                    props.onVariants(next.filter((v, j) => v !== "" || j < i));
                  }}
                >
                  <option value="">{i === 0 ? "nothing" : "remove"}</option>
                  {props.variantOptions.map((o) => (
                    <option key={o.value} value={o.value}>
                      {o.label}
                    </option>
                  ))}
                  {workflows?.map((w) => (
                    <option key={w.slug} value={w.slug}>
                      {w.slug}
                    </option>
                  ))}
                </Select>
              </span>
            );
          })}
          {props.variants.length > 0 && props.variants.length < props.maxVariants && !props.variants.includes("") ? (
            <Button size="sm" onClick={() => props.onVariants([...props.variants, "(same)"])}>
              Add variant
            </Button>
          ) : null}
          <Button size="sm" className="hidden lg:inline-flex" aria-pressed={props.presenting} aria-keyshortcuts="Control+Alt+P Meta+Alt+P" onClick={props.onPresent} title="Presenter view (Ctrl/⌘+Alt+P)">
            {props.presenting ? "Exit presenter" : "Present"}
          </Button>
          <MenuButton label="Code">
            {(close) =>
              (["curl", "fetch", "link"] as const).map((what) => (
                <MenuItem
                  key={what}
                  onClick={() => {
                    props.onCopy(what);
                    setTimeout(close, 600);
                  }}
                >
                  {props.copied === what ? "Copied" : COPY_LABELS[what]}
                </MenuItem>
              ))
            }
          </MenuButton>
        </div>
      </div>
    </div>
  );
}
