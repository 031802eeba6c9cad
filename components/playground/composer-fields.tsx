"use client";

import type { ContextSummary, FieldProblem, WorkflowSummary } from "@/lib/client/api";
import { OPERATIONS, type Composition, type Operation } from "@/lib/client/composition";
import { Button } from "../ui/button";
import { Field, Select, TextArea } from "../ui/field";

type Update = <K extends keyof Composition>(key: K, value: Composition[K]) => void;
type ErrorsAt = (prefix: string) => FieldProblem[];

/** Operation and workflow, side by side. */
export function OperationAndWorkflow({ c, update, workflows, loading, errorsAt }: { c: Composition; update: Update; workflows: WorkflowSummary[] | undefined; loading: boolean; errorsAt: ErrorsAt }) {
  // `slug@4` or `slug@staging` (from "Try this version"): the workflow's own entry describes it.
  const base = c.workflowSlug.split("@")[0];
  const selected = workflows?.find((w) => w.slug === base);
  const pinned = c.workflowSlug.includes("@") ? c.workflowSlug : null;
  return (
    <div className="grid gap-4 sm:grid-cols-2">
      <Field id="operation" label="Operation">
        <Select id="operation" value={c.operation} onChange={(e) => update("operation", e.target.value as Operation)}>
          {OPERATIONS.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </Select>
      </Field>
      <Field id="workflow" label="Workflow" help={selected?.description ?? (loading ? "Loading workflows…" : "")} problems={errorsAt("/workflowSlug")}>
        <Select id="workflow" value={c.workflowSlug} onChange={(e) => update("workflowSlug", e.target.value)} aria-describedby="workflow-help workflow-error">
          {workflows?.length === 0 ? <option value="">No workflows configured</option> : null}
          {pinned ? <option value={pinned}>{pinned} (this version)</option> : null}
          {workflows?.map((w) => (
            <option key={w.slug} value={w.slug}>
              {w.slug} ({w.model})
            </option>
          ))}
        </Select>
      </Field>
    </div>
  );
}

/** Contexts as chips to tick; the workflow's own are always used, and shown so. */
export function ContextsField({ c, update, contexts, errorsAt, fromWorkflow = [] }: { c: Composition; update: Update; contexts: ContextSummary[] | undefined; errorsAt: ErrorsAt; fromWorkflow?: string[] }) {
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
 * The input, with the workflow's example (genserve.yaml's `example`) as its placeholder and, while
 * it is empty, one click away — its schema too, for object runs.
 */
export function InputField({ c, update, errorsAt, example, withSchema }: { c: Composition; update: Update; errorsAt: ErrorsAt; example?: WorkflowSummary["example"]; withSchema: boolean }) {
  const load = () => {
    if (!example) return;
    update("input", example.input);
    if (withSchema && example.schema) update("schemaText", JSON.stringify(example.schema, null, 2));
  };
  return (
    <Field id="input" label="Input" problems={errorsAt("/input")}>
      <TextArea
        id="input"
        rows={5}
        value={c.input}
        onChange={(e) => update("input", e.target.value)}
        aria-describedby="input-error"
        placeholder={example ? `For example: ${example.input.length > 120 ? `${example.input.slice(0, 120)}…` : example.input}` : "What the workflow works on: a document, a question, a record…"}
      />
      {example && c.input.trim() === "" ? (
        <Button size="sm" className="mt-1" onClick={load}>
          Load example{withSchema && example.schema ? " (input and schema)" : ""}
        </Button>
      ) : null}
    </Field>
  );
}
