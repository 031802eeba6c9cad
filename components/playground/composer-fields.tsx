"use client";

import { memo, useMemo } from "react";
import type { ContextSummary, FieldProblem, WorkflowSummary } from "@/lib/client/api";
import { estimateInputTokens, OPERATIONS, type Composition } from "@/lib/client/composition";
import { Button } from "../ui/button";
import { Field, FieldErrors, Select, TextArea } from "../ui/field";
import { selectAll, selectInput, useCompositionSelector, type CompositionStore, type Settings } from "./use-composition";

type Update = <K extends keyof Composition>(key: K, value: Composition[K]) => void;
type ErrorsAt = (prefix: string) => FieldProblem[];

/**
 * What the chosen workflow is (its description and model) and its problems, under the bar where it
 * is chosen; and the compositions run before, to restore one.
 */
export function WorkflowLine({ c, workflows, loading, errorsAt, history, onRestore }: { c: Settings; workflows: WorkflowSummary[] | undefined; loading: boolean; errorsAt: ErrorsAt; history: Composition[]; onRestore(c: Composition): void }) {
  const selected = workflows?.find((w) => w.slug === c.workflowSlug.split("@")[0]);
  const problems = errorsAt("/workflowSlug");
  return (
    <div className="flex flex-wrap items-start justify-between gap-x-4 gap-y-2">
      <div className="min-w-0 text-sm">
        <p id="workflow-help" className="text-zinc-700 dark:text-zinc-300">
          {selected ? (
            <>
              <span className="font-medium">{c.workflowSlug}</span>
              {selected.description ? ` — ${selected.description}` : ""} <span className="text-zinc-600 dark:text-zinc-400">· model {selected.model}</span>
            </>
          ) : loading ? (
            "Loading workflows…"
          ) : (
            ""
          )}
        </p>
        <FieldErrors id="workflow-error" problems={problems} />
      </div>
      {history.length > 0 ? (
        <div className="w-full sm:w-64">
          <label htmlFor="history" className="sr-only">
            Recent compositions
          </label>
          <Select
            id="history"
            compact
            className="w-full"
            value=""
            onChange={(e) => {
              const restored = history[Number(e.target.value)];
              if (restored) onRestore(restored);
            }}
          >
            <option value="">Recent compositions…</option>
            {history.map((h, i) => (
              <option key={i} value={i}>
                {OPERATIONS.find((o) => o.value === h.operation)?.label} · {h.workflowSlug} · {h.input.length > 40 ? `${h.input.slice(0, 40)}…` : h.input}
              </option>
            ))}
          </Select>
        </div>
      ) : null}
    </div>
  );
}

/** Contexts as chips to tick; the workflow's own are always used, and shown so. */
export function ContextsField({ c, update, contexts, errorsAt, fromWorkflow = [] }: { c: Settings; update: Update; contexts: ContextSummary[] | undefined; errorsAt: ErrorsAt; fromWorkflow?: string[] }) {
  const problems = errorsAt("/contextSlugs");
  const toggle = (slug: string, on: boolean) => update("contextSlugs", on ? [...c.contextSlugs, slug] : c.contextSlugs.filter((s) => s !== slug));
  return (
    <fieldset aria-describedby={problems.length ? "contexts-error" : undefined}>
      <legend className="text-sm font-medium">Contexts</legend>
      <div className="mt-1 flex flex-wrap gap-2">
        {contexts?.length === 0 ? <span className="text-sm text-zinc-600 dark:text-zinc-400">No contexts configured.</span> : null}
        {contexts?.map((x) => {
          const always = fromWorkflow.includes(x.slug);
          const checked = always || c.contextSlugs.includes(x.slug);
          return (
            <label
              key={x.slug}
              title={`${x.title} (${x.size.toLocaleString()} chars)${always ? " — always used by this workflow" : ""}`}
              className={`flex max-w-full cursor-pointer items-center gap-1.5 rounded-full border px-2.5 py-0.5 text-sm ${checked ? "border-blue-600 bg-blue-50 dark:border-blue-400 dark:bg-blue-950" : "border-zinc-300 dark:border-zinc-700"} ${always ? "cursor-default" : ""}`}
            >
              <input type="checkbox" checked={checked} disabled={always} onChange={(e) => toggle(x.slug, e.target.checked)} />
              <span className="truncate">{x.slug}</span>
              {always ? <span className="text-xs text-zinc-600 dark:text-zinc-400">(workflow)</span> : null}
            </label>
          );
        })}
      </div>
      {problems.length ? (
        <ul id="contexts-error" className="mt-1 text-sm text-red-700 dark:text-red-400">
          {problems.map((p, i) => (
            <li key={i}>{p.message}</li>
          ))}
        </ul>
      ) : null}
    </fieldset>
  );
}

/**
 * The input, with the workflow's example (genserve.yaml's `example`) as its placeholder and one
 * click away (its schema too, for object runs) while the input and schema are not it already. It
 * reads the input from the composition's store itself, and is memoised: a key press re-renders it,
 * not the composer around it.
 */
export const InputField = memo(function InputField({
  store,
  schemaText,
  problems,
  example,
  withSchema,
}: {
  store: CompositionStore;
  schemaText: string;
  problems: FieldProblem[];
  example?: WorkflowSummary["example"];
  withSchema: boolean;
}) {
  const input = useCompositionSelector(store, selectInput);
  // Offered whenever what is there is not the example already (also over other text, then said
  // so), not only while the input is empty: after another workflow's run it is what helps most.
  // Whether the schema is the example's parses the schema: once per schema, not per key.
  const schemaIsExample = useMemo(() => !withSchema || !example?.schema || sameJson(schemaText, example.schema), [withSchema, example, schemaText]);
  const showsExample = example !== undefined && input === example.input && schemaIsExample;
  const load = () => {
    if (!example) return;
    store.update("input", example.input);
    if (withSchema && example.schema) store.update("schemaText", JSON.stringify(example.schema, null, 2));
  };
  return (
    <Field id="input" label="Input" problems={problems}>
      <TextArea
        id="input"
        rows={5}
        value={input}
        onChange={(e) => store.update("input", e.target.value)}
        aria-describedby="input-error"
        placeholder={example ? `For example: ${example.input.length > 120 ? `${example.input.slice(0, 120)}…` : example.input}` : "What the workflow works on: a document, a question, a record…"}
      />
      {example && !showsExample ? (
        <Button size="sm" className="mt-1" onClick={load}>
          {input.trim() === "" ? "Load example" : "Replace with the example"}
          {withSchema && example.schema ? " (input and schema)" : ""}
        </Button>
      ) : null}
    </Field>
  );
});

/** The run's estimated input tokens, which follow every field the input included (read from the store). */
export const PreflightEstimate = memo(function PreflightEstimate({
  store,
  workflow,
  contexts,
  withSchema,
}: {
  store: CompositionStore;
  workflow: { instructionsChars: number; contexts: string[] } | undefined;
  contexts: ContextSummary[] | undefined;
  withSchema: boolean;
}) {
  const c = useCompositionSelector(store, selectAll);
  const estimate = estimateInputTokens(c, workflow, contexts ?? NO_CONTEXTS);
  return (
    <p className="text-xs text-zinc-700 dark:text-zinc-300" aria-label="Pre-flight">
      Estimated input: about {estimate.toLocaleString()} tokens (workflow instructions, contexts, attachments, input{withSchema ? ", schema" : ""}).
    </p>
  );
});

const NO_CONTEXTS: ContextSummary[] = [];

/** Whether the schema text is the given schema (whatever its layout). */
function sameJson(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}
