/**
 * Shapes of the workflow lifecycle (versions, labels, diff, promotion) and of replays and share
 * links: what the API takes and answers, shared with the playground. Browser-safe.
 */
import { z } from "zod";
import { named } from "./shape-registry";
import { RUN_OPERATIONS, RUN_STATUSES } from "../domain/run-vocabulary";
import { LABEL } from "../domain/names";
import { workflowRef } from "./requests";
import { metadataSchema } from "./responses";
import { runDraftSchema } from "./draft-shapes";
import { evaluationReportSchema } from "./suite-shapes";

const version = z
  .union([z.string().regex(/^(config|[1-9][0-9]{0,8})$/, 'must be a version number or "config"'), z.number().int().min(1)])
  .transform((v) => String(v))
  .describe('A version number, or "config" for the configuration file\'s.');

export const labelName = z.string().regex(LABEL, "must be 1-64 letters, digits, '.', '_' or '-', and not a number or \"config\"");

export const moveLabelRequest = z.strictObject({ version }).apply(named({ id: "MoveLabelRequest" }));

export const promoteRequest = z
  .strictObject({
    version,
    requireSuite: z.string().min(1).max(128).optional().describe("A test suite that must pass against the version before the label moves."),
    minPass: z.number().min(0).max(1).optional().describe("The pass rate the suite must reach (default 1: every case)."),
  })
  .apply(named({ id: "PromoteRequest" }));

const labelMove = z
  .strictObject({
    label: z.string(),
    outcome: z.enum(["moved", "removed", "refused"]).describe("refused: a promotion whose suite did not pass (the label did not move)."),
    version: z.string().nullable(),
    previous: z.string().nullable(),
    keyId: z.string(),
    evaluationId: z.string().nullable(),
    passRate: z.number().nullable(),
    createdAt: z.string(),
  })
  .apply(named({ id: "LabelMove" }));

export const labelMoveSchema = labelMove;

export const labelsSchema = z
  .strictObject({
    slug: z.string(),
    labels: z.array(z.strictObject({ label: z.string(), version: z.string(), movedAt: z.string(), keyId: z.string(), evaluationId: z.string().nullable() })),
    history: z.array(labelMove).describe("Newest first."),
  })
  .apply(named({ id: "WorkflowLabels" }));

export const promotionStartedSchema = z
  .strictObject({
    status: z.literal("pending"),
    evaluationId: z.string().describe("The evaluation that decides the promotion: the label moves when it ends with the pass rate reached."),
    label: z.string(),
    version: z.string(),
    minPass: z.number(),
  })
  .apply(named({ id: "PromotionStarted" }));

export const workflowVersionsSchema = z
  .strictObject({
    slug: z.string(),
    source: z.enum(["config", "api"]),
    versions: z.array(
      z.strictObject({
        version: z.string(),
        createdAt: z.string().nullable(),
        keyId: z.string().nullable(),
        deleted: z.boolean(),
        labels: z.array(z.string()),
        model: z.string().nullable(),
        description: z.string().nullable(),
        note: z.string().nullable().describe("What the version changed, as saved with it."),
        hasSchema: z.boolean(),
      }),
    ),
  })
  .apply(named({ id: "WorkflowVersions" }));

export const diffQuery = z.strictObject({
  from: z.string().min(1).max(80).describe("A version, a label or \"config\"."),
  to: z.string().min(1).max(80),
});

const schemaChange = z.strictObject({ path: z.string(), change: z.string(), breaking: z.boolean() }).apply(named({ id: "SchemaChange" }));

export const workflowDiffSchema = z
  .strictObject({
    slug: z.string(),
    from: z.string(),
    to: z.string(),
    instructions: z.strictObject({
      hunks: z.array(z.strictObject({ oldStart: z.number(), oldLines: z.number(), newStart: z.number(), newLines: z.number(), lines: z.array(z.string()) })),
    }),
    parameters: z.array(z.strictObject({ name: z.string(), from: z.unknown(), to: z.unknown() })),
    contexts: z.strictObject({
      added: z.array(z.string()),
      removed: z.array(z.string()),
      repinned: z.array(z.strictObject({ slug: z.string(), from: z.string(), to: z.string() })),
    }),
    schema: z.strictObject({ changes: z.array(schemaChange), breaking: z.boolean().describe("Whether any change can break callers of the workflow's default schema.") }),
    before: z.strictObject({ instructions: z.string(), schema: z.unknown().nullable() }),
    after: z.strictObject({ instructions: z.string(), schema: z.unknown().nullable() }),
  })
  .apply(named({ id: "WorkflowDiff" }));

export const replayRequest = z
  .strictObject({ workflowSlug: workflowRef().optional().describe("Replay on this version or label instead of the one the run used.") })
  .apply(named({ id: "ReplayRequest" }));

export const replaySchema = z
  .strictObject({
    runId: z.string(),
    originalRunId: z.string(),
    workflowSlug: z.string(),
    output: z.unknown(),
    metadata: metadataSchema,
    differences: z.array(z.strictObject({ path: z.string(), kind: z.enum(["added", "removed", "changed"]), left: z.unknown().optional(), right: z.unknown().optional() })),
    identical: z.boolean(),
    notes: z.array(z.string()),
  })
  .apply(named({ id: "Replay" }));

const pointer = z.string().regex(/^(\/([^~]|~[01])*)+$/, "must be a JSON Pointer such as /email");

export const createShareRequest = z
  .strictObject({
    expiresIn: z
      .string()
      .regex(/^([1-9][0-9]{0,3}[mhd]|never)$/, 'must be a duration such as 30m, 12h or 7d, or "never"')
      .optional()
      .describe("How long the link works (default 7d, at most 365d)."),
    hideFields: z.array(pointer).max(100).optional().describe("Fields of the output masked on the shared page, as JSON Pointers."),
  })
  .apply(named({ id: "CreateShareRequest" }));

export const shareSchema = z
  .strictObject({
    id: z.string(),
    kind: z.enum(["run", "evaluation"]),
    targetId: z.string(),
    hideFields: z.array(z.string()),
    expiresAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
    createdAt: z.string(),
    url: z.string().optional().describe("The link: shown once, when it is made (only its hash is stored)."),
  })
  .apply(named({ id: "Share" }));

export const shareListSchema = z.strictObject({ shares: z.array(shareSchema) }).apply(named({ id: "ShareList" }));

/** What a share link shows: never a key, a secret, a callback or another run. */
export const sharedViewSchema = z
  .strictObject({
    kind: z.enum(["run", "evaluation"]),
    expiresAt: z.string().nullable(),
    hiddenFields: z.array(z.string()),
    run: z
      .strictObject({
        operation: z.enum(RUN_OPERATIONS),
        status: z.enum(RUN_STATUSES),
        workflowSlug: z.string(),
        workflowVersion: z.string().nullable(),
        input: z.string(),
        schema: z.unknown().nullable(),
        output: z.unknown().nullable(),
        error: z.strictObject({ code: z.string(), title: z.string(), detail: z.string() }).nullable(),
        model: z.string().nullable(),
        inputTokens: z.number(),
        outputTokens: z.number(),
        cost: z.string(),
        durationMs: z.number().nullable(),
        attachments: z.array(z.strictObject({ mimeType: z.string(), bytes: z.number() })),
        createdAt: z.string(),
        pace: z.array(z.tuple([z.number(), z.number()])).nullable().describe("How a streamed output arrived: [ms since start, characters so far]."),
        draft: runDraftSchema.nullable().describe("A draft run's definition (unsaved edits of `workflowVersion`) and its diff against that version; null for runs of saved versions."),
      })
      .optional(),
    evaluation: evaluationReportSchema.optional(),
  })
  .apply(named({ id: "SharedView" }));
export type SharedView = z.infer<typeof sharedViewSchema>;
