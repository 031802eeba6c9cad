/**
 * Test suites and their evaluations: the suite document (the same as a YAML file in a repository
 * and as JSON through the API), the evaluation request, and the shapes of what an evaluation
 * reports. Browser-safe: the playground validates suites with the same shapes.
 */
import { z } from "zod";
import { named } from "./shape-registry";
import { SLUG } from "../domain/names";
import { attachmentSchema, callbackSchema, workflowRef } from "./requests";

/** A JSON Pointer (RFC 6901): "" for the whole output, "/a/0/b~1c" for a field inside it. */
export const JSON_POINTER = /^(\/([^~/]|~[01])*)*$/;

/** Cases a suite may hold, and runs of each case one evaluation may make. */
export const MAX_CASES = 5_000;
export const MAX_REPEAT = 20;

const slug = (what: string) =>
  z.string({ error: `must be a ${what} slug (string)` }).regex(SLUG, `must be a ${what} slug: letters, digits, '.', '_' or '-'`);
const finite = (what: string) => z.number({ error: `must be a finite number (${what})` });

/** The kinds of check an expectation may hold; each is reported on its own. */
export const CHECK_KINDS = ["equals", "oneOf", "approx", "min", "max", "length", "matches", "contains", "absent", "present", "grounded", "judge"] as const;
export type CheckKind = (typeof CHECK_KINDS)[number];

const bounds = z
  .strictObject({ min: z.number().int().min(0).optional(), max: z.number().int().min(0).optional() })
  .refine((b) => b.min === undefined || b.max === undefined || b.min <= b.max, "min must not be above max");

export const judgeSpec = z.union([
  z.string().min(1, "must be a criterion in words").max(4000),
  z.strictObject({ criterion: z.string().min(1, "must be a criterion in words").max(4000), workflow: slug("workflow").optional() }),
]);

export const expectationSchema = z
  .strictObject({
    equals: z.unknown().optional().describe("Deep equality (numbers by value); with `partial`, an object subset; with `unordered`, arrays in any order."),
    partial: z.boolean().optional(),
    unordered: z.boolean().optional(),
    oneOf: z.array(z.unknown()).min(1, "must list at least one value").max(1000).optional(),
    approx: finite("approx").optional(),
    tolerance: finite("tolerance").min(0, "must not be negative").optional().describe("Absolute; default 1e-9."),
    min: finite("min").optional(),
    max: finite("max").optional(),
    length: z.union([z.number().int().min(0), bounds]).optional().describe("Characters of a string, items of an array or keys of an object: a number, or {min, max}."),
    matches: z.string().min(1).max(1000).optional().describe("A regular expression in RE2 syntax (linear time; `(?i)` for case-insensitive), found anywhere in the string."),
    contains: z.unknown().optional().describe("A substring of a string, or an item of an array (objects: a subset of the item)."),
    absent: z.literal(true, { error: "must be true" }).optional(),
    present: z.literal(true, { error: "must be true" }).optional(),
    grounded: z
      .literal(true, { error: "must be true" })
      .optional()
      .describe("Every value at or under the field was found in the case's input or attachments (source grounding; the case's run asks for it)."),
    judge: judgeSpec.optional().describe("A criterion in words, checked by a judge workflow that answers pass or fail with a reason (not deterministic)."),
  })
  .superRefine((e, ctx) => {
    const has = (key: string) => Object.prototype.hasOwnProperty.call(e, key) && (e as Record<string, unknown>)[key] !== undefined;
    const kinds = CHECK_KINDS.filter(has);
    if (kinds.length === 0) ctx.addIssue({ code: "custom", message: `must hold at least one check: ${CHECK_KINDS.join(", ")}` });
    if ((has("partial") || has("unordered")) && !has("equals")) ctx.addIssue({ code: "custom", path: [has("partial") ? "partial" : "unordered"], message: "applies to equals, which is missing" });
    if (has("tolerance") && !has("approx")) ctx.addIssue({ code: "custom", path: ["tolerance"], message: "applies to approx, which is missing" });
    if (has("absent") && kinds.length > 1) ctx.addIssue({ code: "custom", path: ["absent"], message: "cannot be combined with other checks" });
    if (e.min !== undefined && e.max !== undefined && e.min > e.max) ctx.addIssue({ code: "custom", path: ["min"], message: "must not be above max" });
  })
  .apply(named({ id: "Expectation", description: "Checks on one field of the output, named by the JSON Pointer it is keyed by." }));
export type Expectation = z.infer<typeof expectationSchema>;

export const suiteCaseSchema = z
  .strictObject({
    name: z.string({ error: "is required (a name unique in the suite)" }).trim().min(1, "must not be empty").max(200),
    input: z.string({ error: "is required and must be a string" }).min(1, "must be at least 1 character"),
    contexts: z.array(slug("context")).max(100).optional(),
    attachments: z.array(attachmentSchema).max(20).optional(),
    history: z
      .array(z.strictObject({ role: z.enum(["user", "assistant"], { error: "must be user or assistant" }), content: z.string() }))
      .max(200)
      .optional()
      .describe("Earlier turns of the conversation, oldest first, as a thread would hold them."),
    expect: z
      .record(z.string(), expectationSchema)
      .superRefine((expect, ctx) => {
        for (const pointer of Object.keys(expect)) {
          if (!JSON_POINTER.test(pointer)) ctx.addIssue({ code: "custom", path: [pointer], message: 'must be a JSON Pointer such as "/total" or "/lines/0/description" ("" for the whole output)' });
        }
        // Reported with the values' problems, not only once they are fixed (it reads the keys alone).
      }, { when: () => true } as never)
      .optional()
      .describe("Expectations keyed by the JSON Pointer of the field they check."),
  })
  .apply(named({ id: "SuiteCase" }));
export type SuiteCase = z.infer<typeof suiteCaseSchema>;

const jsonSchemaValue = z
  .custom<Record<string, unknown>>((v) => v !== null && typeof v === "object" && !Array.isArray(v), { error: "must be a JSON Schema object" })
  .meta({ type: "object" });

export const suiteDocumentSchema = z
  .strictObject({
    suite: slug("suite").optional().describe("The suite's slug; through the API it is the path's, and must match it when given."),
    description: z.string().max(2000).optional(),
    workflow: workflowRef().optional().describe("The workflow the cases run against by default; an evaluation may name another."),
    schema: jsonSchemaValue.optional().describe("The output's JSON Schema: cases are object runs. Without it, cases are text runs and the text is the output (pointer \"\")."),
    judgeWorkflow: slug("workflow").optional().describe("The workflow that checks `judge` expectations that name none."),
    repeat: z.number().int().min(1).max(MAX_REPEAT, `must be at most ${MAX_REPEAT}`).optional().describe("Runs per case (stability); default 1."),
    cases: z.array(suiteCaseSchema).min(1, "must hold at least one case").max(MAX_CASES, `must hold at most ${MAX_CASES} cases`),
  })
  .superRefine((suite, ctx) => {
    const seen = new Map<string, number>();
    for (const [i, c] of suite.cases.entries()) {
      const before = seen.get(c.name);
      if (before !== undefined) ctx.addIssue({ code: "custom", path: ["cases", i, "name"], message: `repeats the name of case ${before}; names must be unique` });
      else seen.set(c.name, i);
      for (const [pointer, e] of Object.entries(c.expect ?? {})) {
        if (e.judge !== undefined && (typeof e.judge === "string" || e.judge.workflow === undefined) && suite.judgeWorkflow === undefined) {
          ctx.addIssue({ code: "custom", path: ["cases", i, "expect", pointer, "judge"], message: "names no workflow, and the suite has no judgeWorkflow" });
        }
      }
    }
  })
  .apply(named({ id: "SuiteDocument", description: "A test suite: cases, each an input with expectations on fields of the output." }));
export type SuiteDocument = z.infer<typeof suiteDocumentSchema>;

export const createEvaluationRequest = z
  .strictObject({
    workflowSlug: workflowRef().optional().describe("Run the cases against this workflow (a slug, `slug@4` or `slug@label`) instead of the suite's."),
    model: slug("model").optional().describe("A model alias of the configuration, instead of the workflow's."),
    repeat: z.number().int().min(1).max(MAX_REPEAT, `must be at most ${MAX_REPEAT}`).optional(),
    baseline: z.string().min(1).max(100).optional().describe('An evaluation id to compare with, or "latest": the suite\'s newest completed evaluation.'),
    concurrency: z.number().int().min(1).max(64).optional().describe("Case runs at once (default and maximum: limits.evaluationConcurrency)."),
    callback: callbackSchema.optional().describe("Where the signed evaluation.completed event goes."),
  })
  .apply(named({ id: "CreateEvaluationRequest" }));
export type CreateEvaluationRequest = z.infer<typeof createEvaluationRequest>;

// ---- What an evaluation reports ----

export const checkResultSchema = z
  .strictObject({
    path: z.string().describe("The field, as a JSON Pointer into the output."),
    check: z.enum(CHECK_KINDS),
    pass: z.boolean(),
    expected: z.unknown().optional(),
    actual: z.unknown().optional().describe("The field's value; absent when the field is missing."),
    reason: z.string().optional().describe("Why it failed (or, for judge, the judge's reason)."),
  })
  .apply(named({ id: "CheckResult" }));
export type CheckResult = z.infer<typeof checkResultSchema>;

const ITEM_STATUSES = ["passed", "failed", "error"] as const;
export const EVALUATION_STATUSES = ["queued", "running", "completed", "cancelled", "failed"] as const;

export const caseRunSchema = z
  .strictObject({
    repeat: z.number(),
    runId: z.string().nullable(),
    status: z.enum(ITEM_STATUSES).describe("passed: valid output, every expectation held; failed: one did not; error: the run failed."),
    durationMs: z.number().nullable(),
    cost: z.string(),
    inputTokens: z.number(),
    outputTokens: z.number(),
    output: z.unknown().nullable(),
    error: z.strictObject({ code: z.string(), detail: z.string() }).nullable(),
    checks: z.array(checkResultSchema),
  })
  .apply(named({ id: "CaseRun" }));
export type CaseRun = z.infer<typeof caseRunSchema>;

const rate = z.number().nullable().describe("Passed / decided, 0-1; null when nothing was decided yet.");

export const fieldResultSchema = z
  .strictObject({ path: z.string(), checks: z.number(), passed: z.number(), passRate: rate, stable: z.boolean().describe("Every repeat gave the same verdict.") })
  .apply(named({ id: "FieldResult" }));

export const caseResultSchema = z
  .strictObject({
    index: z.number(),
    name: z.string(),
    runs: z.array(caseRunSchema),
    passed: z.number(),
    passRate: rate,
    stable: z.boolean(),
    fields: z.array(fieldResultSchema),
  })
  .apply(named({ id: "CaseResult" }));
export type CaseResult = z.infer<typeof caseResultSchema>;

export const evaluationTotalsSchema = z
  .strictObject({
    cases: z.number(),
    runs: z.number().describe("Case runs planned: cases × repeat."),
    done: z.number(),
    passed: z.number(),
    failed: z.number(),
    errors: z.number(),
    passRate: rate,
    casesPassed: z.number().describe("Cases whose every repeat passed."),
    checks: z.strictObject({ passed: z.number(), failed: z.number() }).describe("Deterministic checks."),
    judged: z.strictObject({ passed: z.number(), failed: z.number() }).describe("judge checks, reported apart: a model decides them."),
    costUsd: z.string(),
    inputTokens: z.number(),
    outputTokens: z.number(),
    durationMsP50: z.number().nullable(),
    durationMsP95: z.number().nullable(),
  })
  .apply(named({ id: "EvaluationTotals" }));
export type EvaluationTotals = z.infer<typeof evaluationTotalsSchema>;

export const baselineDiffSchema = z
  .strictObject({
    id: z.string(),
    newlyFailing: z.array(z.strictObject({ case: z.string(), paths: z.array(z.string()) })).describe("Cases that passed in the baseline and fail now, with the fields that fail."),
    newlyPassing: z.array(z.string()),
    changed: z.array(z.strictObject({ case: z.string(), path: z.string(), before: z.unknown().optional(), after: z.unknown().optional() })).describe("Checked fields whose value changed (first repeat)."),
    passRateDelta: z.number().nullable(),
    costDeltaUsd: z.string(),
    durationMsP50Delta: z.number().nullable(),
  })
  .apply(named({ id: "BaselineDiff" }));
export type BaselineDiff = z.infer<typeof baselineDiffSchema>;

export const evaluationTargetSchema = z
  .strictObject({
    workflowSlug: z.string(),
    model: z.string().nullable().describe("The model alias the cases ran on instead of the workflow's; null: the workflow's."),
    operation: z.enum(["generate.object", "generate.text"]),
    repeat: z.number(),
    concurrency: z.number(),
    baselineId: z.string().nullable(),
    callback: callbackSchema.nullable().describe("Header values are never shown again: `[hidden]`."),
    promotion: z
      .strictObject({ slug: z.string(), label: z.string(), version: z.string(), minPass: z.number() })
      .optional()
      .describe("For an evaluation gating a promotion: the label moves to the version when the pass rate reaches minPass."),
  })
  .apply(named({ id: "EvaluationTarget" }));
export type EvaluationTarget = z.infer<typeof evaluationTargetSchema>;

export const evaluationSummarySchema = z
  .strictObject({
    id: z.string(),
    suite: z.string(),
    suiteVersion: z.number(),
    status: z.enum(EVALUATION_STATUSES),
    target: evaluationTargetSchema,
    totals: evaluationTotalsSchema,
    error: z.strictObject({ code: z.string(), detail: z.string() }).nullable(),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
  })
  .apply(named({ id: "EvaluationSummary" }));
export type EvaluationSummary = z.infer<typeof evaluationSummarySchema>;

export const evaluationReportSchema = evaluationSummarySchema
  .extend({
    cases: z.array(caseResultSchema),
    fields: z.array(fieldResultSchema).describe("Per field over every case and repeat."),
    baseline: baselineDiffSchema.nullable(),
  })
  .apply(named({ id: "Evaluation" }));
export type EvaluationReport = z.infer<typeof evaluationReportSchema>;

export const evaluationListSchema = z.strictObject({ evaluations: z.array(evaluationSummarySchema) }).apply(named({ id: "EvaluationList" }));

export const suiteSchema = z
  .strictObject({ slug: z.string(), version: z.number(), keyId: z.string(), createdAt: z.string(), updatedAt: z.string(), document: suiteDocumentSchema })
  .apply(named({ id: "Suite" }));

export const suiteListSchema = z
  .strictObject({
    suites: z.array(z.strictObject({ slug: z.string(), version: z.number(), keyId: z.string(), cases: z.number(), workflow: z.string().nullable(), description: z.string().nullable(), updatedAt: z.string() })),
  })
  .apply(named({ id: "SuiteList" }));

export const queuedEvaluationSchema = z.strictObject({ id: z.string(), status: z.literal("queued") }).apply(named({ id: "QueuedEvaluation" }));
