/**
 * Request shapes of the public API, as zod schemas derived from the domain's types (lib/domain):
 * each shape is checked against the type it carries. The route handlers validate with them, the
 * OpenAPI document is generated from them, and the playground's client shares them. Response
 * shapes are in responses.ts. Browser-safe: no server imports here.
 */
import { z } from "zod";
import { named } from "./shape-registry";
import { usdToNanos, type LimitsView } from "../domain/key-limits";
import { SLUG, WORKFLOW_REF } from "../domain/names";
import { ROLES } from "../domain/roles";
import { RUN_OPERATIONS, RUN_STATUSES, type AttachmentInput, type CallbackSpec } from "../domain/run-vocabulary";
import { draftSchema } from "./draft-shapes";

/** Thread ids: "." and ".." are refused (as a path segment they name no thread: /threads/.. is /). */
export const THREAD_ID = /^(?!\.{1,2}$)[A-Za-z0-9._:-]{1,128}$/;
/** A header field name (RFC 9110 token). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/**
 * A header field value genserve will send: visible ASCII, spaces and tabs. RFC 9110 also admits
 * obs-text (bytes 0x80-0xFF), which HTTP clients encode inconsistently; CR, LF and NUL are never
 * allowed (Node's HTTP client throws on them).
 */
export const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

/** A workflow as callers name it: `slug`, `slug@4` (a version), `slug@staging` (a label). */
export const workflowRef = () =>
  z
    .string({ error: "must be a workflow slug (string)" })
    .regex(WORKFLOW_REF, "must be a workflow slug, optionally with @version or @label (invoice, invoice@4, invoice@staging)")
    .describe("A workflow slug (its `production` label when set, else its latest version), `slug@4` for a version, `slug@config` for the configuration file's, or `slug@label`.");

const slug = (what: string) =>
  z.string({ error: `must be a ${what} slug (string)` }).regex(SLUG, `must be a ${what} slug: letters, digits, '.', '_' or '-'`);

export const callbackSchema = z
  .object({
    url: z.url({ protocol: /^https?$/, error: "must be an absolute http or https URL" }).max(2048),
    customProperties: z.record(z.string(), z.unknown()).optional(),
    headers: z
      .record(
        z.string().regex(HEADER_NAME, "must be a valid header name (RFC 9110 token: letters, digits and !#$%&'*+.^_`|~-)").max(256),
        z.string().regex(HEADER_VALUE, "must be visible ASCII, spaces or tabs (no line breaks or non-ASCII characters; percent-encode them)").max(8192),
      )
      .refine((headers) => Object.keys(headers).length <= 32, "at most 32 headers")
      .optional(),
  })
  .strict()
  .apply(named({ id: "Callback", description: "Where the run's event is delivered when it ends." })) satisfies z.ZodType<CallbackSpec>;

export const attachmentSchema = z
  .object({
    file: z.string().min(1, "must not be empty").describe("Inline content (standard base64 or a data: URL) or an http(s) URL."),
    mimeType: z
      .string()
      .regex(/^[\w.+-]+\/[\w.+-]+$/, "must be a media type such as text/plain")
      .optional()
      .describe("Media type of the file; required for inline content."),
  })
  .strict()
  .apply(named({ id: "Attachment" })) satisfies z.ZodType<AttachmentInput>;

const input = z.string({ error: "is required and must be a string" }).min(1, "must be at least 1 character");
// z.custom passes the caller's object through as is (z.record would copy it), so the schema the
// route screened and compiled is the very object the pipeline receives: SchemaCompiler remembers it.
const jsonSchemaValue = z
  .custom<Record<string, unknown>>((v) => v !== null && typeof v === "object" && !Array.isArray(v), { error: "must be a JSON Schema object" })
  .meta({ type: "object", description: 'A JSON Schema whose top-level type is "object", "array" or "string" (with a non-empty enum).' });
const attachments = z.array(attachmentSchema).optional();
const contextSlugs = z.array(slug("context")).max(100).optional();
const grounding = z
  .boolean({ error: "must be true or false" })
  .optional()
  .describe(
    "true: after generation, each string, number, boolean and date value of the object is aligned with the input and the attachments' extracted text (no model call): `grounding` in the response and on the run, `metadata.grounding` the counts. Schemas may mark properties `\"x-grounded\": true` (checked whether or not this is set).",
  );

export const generateObjectRequest = z
  .object({
    input,
    type: z.literal("event", { error: 'must be "event"' }),
    callback: callbackSchema,
    workflowSlug: workflowRef(),
    schema: jsonSchemaValue.optional().describe("The output's JSON Schema; without it, the workflow version's default schema (400 when it has none)."),
    attachments,
    contextSlugs,
    draft: draftSchema.optional(),
    grounding,
  })
  .strict()
  .apply(named({ id: "GenerateObjectRequest" }));

export const generateTextRequest = z
  .object({
    input,
    type: z.literal("event", { error: 'must be "event"' }),
    callback: callbackSchema,
    workflowSlug: workflowRef(),
    attachments,
    contextSlugs,
    draft: draftSchema.optional(),
    grounding: z
      .never({ error: "is only for object runs (generate/object, stream/object): a text run's output has no values to ground" })
      .optional()
      .describe("Not available: grounding is for object runs."),
  })
  .strict()
  .apply(named({ id: "GenerateTextRequest" }));

export const streamObjectRequest = z
  .object({
    input,
    schema: jsonSchemaValue.optional().describe("The output's JSON Schema; without it, the workflow version's default schema (400 when it has none)."),
    workflowSlug: workflowRef().optional(),
    threadId: z.string().regex(THREAD_ID, "must be 1-128 characters of letters, digits, '.', '_', ':' or '-' (not '.' or '..')").optional(),
    attachments,
    contextSlugs,
    draft: draftSchema.optional(),
    grounding,
  })
  .strict()
  .superRefine((request, ctx) => {
    // A run needs a workflow: named, or the one of an existing thread.
    if (request.workflowSlug === undefined && request.threadId === undefined) {
      ctx.addIssue({ code: "custom", path: ["workflowSlug"], message: "is required when threadId is absent" });
      ctx.addIssue({ code: "custom", path: ["threadId"], message: "is required when workflowSlug is absent" });
    }
  })
  .apply(named({ id: "StreamObjectRequest", description: "workflowSlug, threadId, or both: a thread that exists names its workflow." }));

export type GenerateObjectRequest = z.infer<typeof generateObjectRequest>;
export type GenerateTextRequest = z.infer<typeof generateTextRequest>;
export type StreamObjectRequest = z.infer<typeof streamObjectRequest>;

export const createThreadRequest = z
  .object({
    workflowSlug: workflowRef(),
    id: z.string().regex(THREAD_ID, "must be 1-128 characters of letters, digits, '.', '_', ':' or '-' (not '.' or '..')").optional(),
  })
  .strict()
  .apply(named({ id: "CreateThreadRequest" }));

export const checkSchemaRequest = z
  .object({
    schema: jsonSchemaValue,
    workflowSlug: workflowRef().optional().describe("The workflow whose model the schema is checked for; without it, only whether genserve accepts the schema."),
  })
  .strict()
  .apply(named({ id: "CheckSchemaRequest" }));
export type CheckSchemaRequest = z.infer<typeof checkSchemaRequest>;

const runStatus = z.enum(RUN_STATUSES);

const instant = z.iso.datetime({ offset: true, error: "must be an ISO 8601 date-time, e.g. 2026-11-01T00:00:00Z" });

export const runListQuery = z
  .object({
    workflowSlug: slug("workflow").optional(),
    status: runStatus.optional(),
    operation: z.enum(RUN_OPERATIONS).optional(),
    evaluationId: z.string().regex(/^eval_[0-9A-Z]{26}$/, "must be an evaluation id (eval_…)").optional(),
    /** Runs whose input contains this text (case-insensitive), or whose id it is. */
    q: z.string().trim().min(1, "must not be empty").max(200, "must be at most 200 characters").optional(),
    /** Runs created at or after this instant, and before `to`. */
    from: instant.optional(),
    to: instant.optional(),
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: z.string().max(200).optional(),
  })
  .strict();

/** GET /api/v1/threads/{id}: a page of its messages. */
export const threadPageQuery = z
  .object({
    order: z.enum(["asc", "desc"]).default("asc"),
    limit: z.coerce.number().int().min(1).max(200).default(100),
    cursor: z.string().max(100).optional(),
  })
  .strict();

const MAX_COUNT = 1_000_000_000;
const count = (what: string) =>
  z
    .number({ error: `must be a whole number of ${what}, or null for no limit` })
    .int(`must be a whole number of ${what}`)
    .min(1, "must be at least 1 (null: no limit)")
    .max(MAX_COUNT, `must be at most ${MAX_COUNT}`)
    .nullable()
    .optional();
const usd = z
  .union([z.string(), z.number()], { error: 'must be an amount in US dollars such as "5" or "12.50", or null for no budget' })
  .transform((value, ctx) => {
    const text = typeof value === "number" ? String(value) : value;
    if (usdToNanos(text) === null) {
      ctx.addIssue({ code: "custom", message: 'must be an amount in US dollars such as "5" or "12.50" (at most 9 decimals), or null for no budget' });
      return z.NEVER;
    }
    return text.trim();
  })
  .nullable()
  .optional();

/** A key's limits as callers set them: absent leaves a limit as it is, null removes it. */
export const keyLimitsInput = z
  .object({
    rpm: count("runs per minute"),
    tpm: count("tokens per minute"),
    concurrency: count("runs at once"),
    workflows: z.array(slug("workflow")).max(1000).nullable().optional().describe("The workflows the key may run; null: all."),
    budgetDailyUsd: usd,
    budgetMonthlyUsd: usd,
  })
  .strict()
  .apply(named({ id: "KeyLimitsInput", description: "Absent: unchanged; null: no limit. Budgets in US dollars, per UTC day and calendar month." })) satisfies z.ZodType<Partial<LimitsView>>;

export const createKeyRequest = z
  .object({
    name: z.string().trim().min(1, "must be 1-200 characters").max(200, "must be 1-200 characters"),
    role: z.enum(ROLES).optional().describe("viewer, editor (the default) or admin, in the key's project."),
    admin: z.boolean().optional().describe("Kept from before roles: true is role admin (a conflicting role is refused)."),
    project: z.string().regex(SLUG, "must be a project slug").optional().describe("The project's slug; the calling key's project when left out. Only admin keys of the default project create keys in other projects."),
    limits: keyLimitsInput.optional(),
  })
  .strict()
  .apply(named({ id: "CreateKeyRequest" }));

export const updateKeyRequest = z
  .object({
    name: z.string().trim().min(1, "must be 1-200 characters").max(200, "must be 1-200 characters").optional(),
    limits: keyLimitsInput.optional(),
  })
  .strict()
  .apply(named({ id: "UpdateKeyRequest" }));


/** GET /api/v1/usage: finished runs created in [from, to) (default: the last 7 days). */
export const usageQuery = z
  .object({
    from: instant.optional(),
    to: instant.optional(),
    groupBy: z.enum(["workflow", "model", "key"], { error: "must be workflow, model or key" }).default("workflow"),
    bucket: z.enum(["hour", "day"], { error: "must be hour or day" }).optional(),
    keyId: z.string().max(100).optional().describe("Admin keys: one key's usage (others always see their own)."),
  })
  .strict();

/** GET /api/v1/inbox/{id}: a page of deliveries, newest first. */
export const inboxQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(100),
    cursor: z
      .string()
      .regex(/^[1-9][0-9]{0,15}$/, "is not a cursor this API returned")
      .optional()
      .describe("`nextCursor` of the previous page."),
  })
  .strict();
