/**
 * Drafts: a workflow's definition edited in the playground and run without being saved. The draft
 * names only what it changes from the version it started from (the request's `workflowSlug`); the
 * run stores the definition that ran, its base version and what changed. Browser-safe.
 */
import { z } from "zod";
import type { DraftDefinition, RunDraft, WorkflowDraft } from "../domain/drafts";
import { named } from "./shape-registry";

const SLUG_LIKE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export const draftSchema = z
  .strictObject({
    instructions: z.string({ error: "must be a string" }).max(200_000, "must be at most 200,000 characters").optional(),
    model: z.string({ error: "must be a model alias (string)" }).min(1, "must name a model alias").max(128).optional(),
    temperature: z.number({ error: "must be a number from 0 to 2, or null for the model's default" }).min(0).max(2).nullable().optional(),
    maxOutputTokens: z.number({ error: "must be a whole number of tokens, or null for the model's limit" }).int().positive().max(1_000_000).nullable().optional(),
    retries: z.number({ error: "must be a whole number from 0 to 10" }).int().min(0).max(10).optional(),
    contexts: z.array(z.string().regex(SLUG_LIKE, "must be a context slug")).max(100).optional(),
  })
  .apply(
    named({
      id: "WorkflowDraft",
      description:
        "Admin keys: run the workflow version named by `workflowSlug` with these fields changed, without saving them (null removes a limit). The run is stored as a draft run with the definition that ran.",
    }),
  ) satisfies z.ZodType<WorkflowDraft>;

/** The fields of a workflow a draft can change, as the run ran them. */
export const draftDefinitionSchema = z
  .strictObject({
    model: z.string(),
    instructions: z.string(),
    temperature: z.number().nullable(),
    maxOutputTokens: z.number().nullable(),
    retries: z.number(),
    contexts: z.array(z.string()),
  })
  .apply(named({ id: "DraftDefinition" })) satisfies z.ZodType<DraftDefinition>;

/** What a draft run records: the version it started from, the definition that ran, and what differs. */
export const runDraftSchema = z
  .strictObject({
    base: z.string().describe("The workflow version the draft started from."),
    definition: draftDefinitionSchema,
    changes: z
      .array(z.strictObject({ name: z.string(), from: z.unknown(), to: z.unknown() }))
      .describe("The fields whose value differs from the base version's (instructions as whole texts)."),
    instructionsDiff: z.array(z.string()).describe('The instructions as a unified line diff against the base version (" ", "-", "+" lines); empty when unchanged.'),
  })
  .apply(named({ id: "RunDraft", description: "Set for a draft run: a workflow definition edited and run without being saved." })) satisfies z.ZodType<RunDraft>;
export type { DraftDefinition, RunDraft, WorkflowDraft };
