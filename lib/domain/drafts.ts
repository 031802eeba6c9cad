/**
 * Drafts: a workflow's definition edited and run without being saved. A draft names only what it
 * changes from the version it started from; a draft run records the definition that ran.
 */

/** What a draft may change (null removes a limit). */
export interface WorkflowDraft {
  instructions?: string;
  model?: string;
  temperature?: number | null;
  maxOutputTokens?: number | null;
  retries?: number;
  contexts?: string[];
}

/** The fields of a workflow a draft can change, as a run ran them. */
export interface DraftDefinition {
  model: string;
  instructions: string;
  temperature: number | null;
  maxOutputTokens: number | null;
  retries: number;
  contexts: string[];
}

/** What a draft run records. */
export interface RunDraft {
  /** The workflow version the draft started from. */
  base: string;
  definition: DraftDefinition;
  /** The fields that differ from the base version's. */
  changes: { name: string; from: unknown; to: unknown }[];
  /** The instructions as unified diff lines against the base version's; empty when unchanged. */
  instructionsDiff: string[];
}

/** The fields a draft can change, in order. */
export const DRAFT_FIELDS = ["model", "instructions", "temperature", "maxOutputTokens", "retries", "contexts"] as const satisfies readonly (keyof DraftDefinition)[];

/** A workflow version's definition as a draft sees it (limits it does not set are null). */
export function draftDefinitionOf(w: { model: string; instructions: string; temperature?: number; maxOutputTokens?: number; retries: number; contexts: string[] }): DraftDefinition {
  return { model: w.model, instructions: w.instructions, temperature: w.temperature ?? null, maxOutputTokens: w.maxOutputTokens ?? null, retries: w.retries, contexts: w.contexts };
}

/** The fields whose value differs between two definitions (the values are JSON: strings, numbers, null, string lists). */
export function changedDraftFields(before: DraftDefinition, after: DraftDefinition): (keyof DraftDefinition)[] {
  return DRAFT_FIELDS.filter((field) => JSON.stringify(before[field]) !== JSON.stringify(after[field]));
}
