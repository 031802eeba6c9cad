import type { WorkflowDraft } from "@/lib/domain/drafts";

/**
 * A variant compared with the composition as it is (A): a workflow or one of its versions or
 * labels (`slug`, `slug@4`, `slug@staging`), the same again, the saved version without this
 * browser's draft, or the same prompt on another model alias (a draft of the model: admin keys).
 */
export type Variant = string;
export const SAME = "(same)";
export const SAVED = "(saved)";
export const MODEL = "model:";
/** At most this many variants beside A (four columns in all). */
export const MAX_VARIANTS = 3;
export const COLUMN_NAMES = ["A", "B", "C", "D"] as const;

/** The request body of a variant: A's body with the workflow or the draft changed as the variant says. */
export function variantBody(variant: Variant, body: Record<string, unknown>, draft: WorkflowDraft | undefined, workflowSlug: string): Record<string, unknown> {
  const { draft: _drop, ...plain } = body;
  if (variant === SAME) return body;
  if (variant === SAVED) return { ...plain, workflowSlug };
  if (variant.startsWith(MODEL)) return { ...plain, draft: { ...draft, model: variant.slice(MODEL.length) } };
  return { ...plain, workflowSlug: variant };
}

/** How a variant is named in its column before its run reports a model. */
export function variantLabel(variant: Variant, workflowSlug: string): string {
  if (variant === SAME) return `${workflowSlug} again`;
  if (variant === SAVED) return `${workflowSlug} as saved`;
  if (variant.startsWith(MODEL)) return `${workflowSlug} on ${variant.slice(MODEL.length)}`;
  return variant;
}
