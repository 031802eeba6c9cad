"use client";

import type { ContextSummary, FieldProblem, WorkflowSummary } from "@/lib/client/api";
import { OPERATIONS, type Composition, type Operation } from "@/lib/client/composition";
import { Field, Select, TextArea } from "../ui/field";

type Update = <K extends keyof Composition>(key: K, value: Composition[K]) => void;
type ErrorsAt = (prefix: string) => FieldProblem[];

/** Operation and workflow, side by side. */
export function OperationAndWorkflow({ c, update, workflows, loading, errorsAt }: { c: Composition; update: Update; workflows: WorkflowSummary[] | undefined; loading: boolean; errorsAt: ErrorsAt }) {
  const selected = workflows?.find((w) => w.slug === c.workflowSlug);
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

export function ContextsField({ c, update, contexts, errorsAt }: { c: Composition; update: Update; contexts: ContextSummary[] | undefined; errorsAt: ErrorsAt }) {
  return (
    <Field id="contexts" label="Contexts" problems={errorsAt("/contextSlugs")}>
      <Select id="contexts" multiple className="h-20" value={c.contextSlugs} onChange={(e) => update("contextSlugs", [...e.target.selectedOptions].map((o) => o.value))} aria-describedby="contexts-error">
        {contexts?.map((x) => (
          <option key={x.slug} value={x.slug}>
            {x.slug} — {x.title} ({x.size} chars)
          </option>
        ))}
      </Select>
    </Field>
  );
}

export function InputField({ c, update, errorsAt }: { c: Composition; update: Update; errorsAt: ErrorsAt }) {
  return (
    <Field id="input" label="Input" problems={errorsAt("/input")}>
      <TextArea id="input" rows={5} value={c.input} onChange={(e) => update("input", e.target.value)} aria-describedby="input-error" />
    </Field>
  );
}
