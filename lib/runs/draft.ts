import "server-only";
import { structuredPatch } from "diff";
import { changedDraftFields, draftDefinitionOf, type DraftDefinition, type RunDraft, type WorkflowDraft } from "../domain/drafts";
import type { Catalog, CatalogWorkflow } from "../catalog/workflow-catalog";
import type { Config } from "../config/config-types";
import { GenserveError, validationError, type FieldError } from "../errors";
import type { Principal } from "../keys/api-keys";
import { roleAtLeast } from "../domain/roles";

/** Who may run a draft: those who may edit the workflow (editors and admins of its project). */
export function assertMayRunDraft(caller: Principal): void {
  if (roleAtLeast(caller.role, "editor")) return;
  throw new GenserveError("forbidden", {
    detail: "Only keys that may edit workflows (editor or admin keys) may run a draft; run a saved version (slug, slug@N or slug@label) instead.",
    errors: [{ path: "/draft", message: "drafts need a key that may edit the workflow (an editor or admin key)" }],
  });
}

/**
 * The resolved version with the draft's fields applied, checked (model aliases and contexts must
 * exist, 400 naming the field under /draft), and what the run records of it. The version itself
 * is untouched: nothing of a draft is saved but the run.
 */
export async function applyDraft(deps: { config: Config; catalog: Catalog }, caller: Principal, base: CatalogWorkflow, draft: WorkflowDraft): Promise<{ workflow: CatalogWorkflow; record: RunDraft }> {
  assertMayRunDraft(caller);
  const problems: FieldError[] = [];
  if (draft.model !== undefined && !deps.config.models[draft.model]) {
    problems.push({ path: "/draft/model", message: `unknown model "${draft.model}"; the configuration has ${Object.keys(deps.config.models).join(", ")}` });
  }
  for (const [i, slug] of (draft.contexts ?? []).entries()) {
    if (!(await deps.catalog.forProject(caller.projectId).context(slug))) problems.push({ path: `/draft/contexts/${i}`, message: `unknown context "${slug}"` });
  }
  if (problems.length > 0) throw validationError(problems);
  const before = draftDefinitionOf(base);
  const definition: DraftDefinition = {
    model: draft.model ?? before.model,
    instructions: draft.instructions ?? before.instructions,
    temperature: draft.temperature === undefined ? before.temperature : draft.temperature,
    maxOutputTokens: draft.maxOutputTokens === undefined ? before.maxOutputTokens : draft.maxOutputTokens,
    retries: draft.retries ?? before.retries,
    contexts: [...new Set(draft.contexts ?? before.contexts)],
  };
  const { temperature, maxOutputTokens, ...rest } = definition;
  const { temperature: _t, maxOutputTokens: _m, ...baseRest } = base;
  const workflow: CatalogWorkflow = {
    ...baseRest,
    ...rest,
    ...(temperature !== null && { temperature }),
    ...(maxOutputTokens !== null && { maxOutputTokens }),
  };
  const changes = changedDraftFields(before, definition).map((name) => ({ name, from: before[name], to: definition[name] }));
  const patch = structuredPatch("base", "draft", withNewline(before.instructions), withNewline(definition.instructions), "", "", { context: 3 });
  return { workflow, record: { base: base.version, definition, changes, instructionsDiff: patch.hunks.flatMap((h) => h.lines) } };
}

const withNewline = (text: string) => (text.endsWith("\n") || text === "" ? text : `${text}\n`);
