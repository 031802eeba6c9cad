/**
 * Names callers and operators choose. Browser-safe; imports nothing.
 */

/** Workflow, context and model aliases: 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit. */
export const SLUG = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** A label of a workflow's versions (`production`, `staging`, …): a slug that is not a number or "config". */
export const LABEL = /^(?!config$)(?![0-9]+$)[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** A workflow as callers name it: `slug`, `slug@4` (a version), `slug@config` or `slug@staging` (a label). */
export const WORKFLOW_REF = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}(@(config|[0-9]{1,9}|[A-Za-z0-9][A-Za-z0-9._-]{0,63}))?$/;

export type WorkflowSelector = { kind: "default" } | { kind: "version"; version: string } | { kind: "label"; label: string };

/** Splits a workflow reference (already matched against WORKFLOW_REF) into its slug and what it selects. */
export function parseWorkflowRef(ref: string): { slug: string; selector: WorkflowSelector } {
  const at = ref.indexOf("@");
  if (at < 0) return { slug: ref, selector: { kind: "default" } };
  const slug = ref.slice(0, at);
  const part = ref.slice(at + 1);
  if (part === "config" || /^[0-9]+$/.test(part)) return { slug, selector: { kind: "version", version: part === "config" ? "config" : String(Number(part)) } };
  return { slug, selector: { kind: "label", label: part } };
}
