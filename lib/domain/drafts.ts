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
