/**
 * Response shapes of the public API, as zod schemas: the route handlers build their bodies through
 * them (`reply` in lib/http/problem.ts checks a body against its shape's type), the OpenAPI
 * document is generated from them, and a test validates real responses of every route against that
 * document. Browser-safe.
 */
import { z } from "zod";
import { named } from "./shape-registry";
import type { LimitsView, Quota } from "../domain/key-limits";
import { DECODING_MODES, RUN_OPERATIONS, RUN_STATUSES, type RunMetadata } from "../domain/run-vocabulary";
import type { GroundedLeaf } from "../domain/grounding";
import type { ProblemBody } from "../errors";
import { runDraftSchema } from "./draft-shapes";
import { projectSchema, roleSchema } from "./project-shapes";
import { callbackSchema } from "./requests";

export const problemSchema = z
  .strictObject({
    type: z.string(),
    title: z.string(),
    status: z.number(),
    detail: z.string(),
    code: z.string(),
    runId: z.string().optional(),
    errors: z.array(z.strictObject({ path: z.string(), message: z.string() })).optional(),
    budget: z
      .strictObject({ period: z.enum(["daily", "monthly"]), limitUsd: z.string(), spentUsd: z.string(), reservedUsd: z.string(), resetsAt: z.string() })
      .optional()
      .describe("budget_exceeded: the key's budget that refused the run, and when it resets."),
    limit: z
      .strictObject({ policy: z.enum(["rpm", "tpm", "concurrency"]), quota: z.number(), retryAfterSeconds: z.number() })
      .optional()
      .describe("rate_limited by the key's limits: which policy refused the run."),
    lastOutput: z
      .string()
      .optional()
      .describe("output_invalid: the model's last output as generated (up to 32,768 characters); `errors` name its failing places. cancelled: a streamed run's output so far."),
    quota: z
      .strictObject({ resource: z.enum(["inboxes", "shares", "threads", "suites"]), limit: z.number(), used: z.number() })
      .optional()
      .describe("quota_exceeded: what the key holds as many of as it may, its limit and how many it holds."),
  })
  .apply(named({ id: "Problem", description: "RFC 9457 problem details with a stable `code`; `errors` names each offending field by JSON Pointer." })) satisfies z.ZodType<ProblemBody>;

export const metadataSchema = z
  .strictObject({
    runId: z.string(),
    cost: z.string().describe('US dollars as a decimal string, e.g. "0.0000555".'),
    model: z.strictObject({ name: z.string(), tag: z.string() }),
    durationInMs: z.number(),
    inputTokens: z.number(),
    outputTokens: z.number(),
    warnings: z
      .array(z.string())
      .optional()
      .describe("What the run tolerated or fell back from, e.g. a draft-04 `id` in a later draft's schema, or a grammar over its compile budget. Absent when nothing."),
    grounding: z
      .strictObject({ grounded: z.number(), total: z.number() })
      .optional()
      .describe("With `grounding: true`: the object's leaves found in the sources (any match but none), of all its leaves."),
    finishReason: z.string().optional().describe("Why the model stopped, when not the ordinary stop: `length` (it reached its output limit; a text run's text is cut), `content-filter`…"),
  })
  .apply(named({ id: "RunMetadata" })) satisfies z.ZodType<RunMetadata>;

export const groundedLeafSchema = z
  .strictObject({
    pointer: z.string().describe("The value's JSON Pointer in the object."),
    match: z.enum(["exact", "normalized", "fuzzy", "none"]).describe("exact: verbatim; normalized: after folding case, spacing, punctuation, number and date formats; fuzzy: approximately (see score); none: not found."),
    source: z.union([z.literal("input"), z.strictObject({ attachment: z.number() })]).optional().describe("The input, or the attachment (by index) the value was found in."),
    page: z.number().optional().describe("For a PDF: the page the match starts on."),
    start: z.number().optional().describe("Offset (UTF-16 code units) in the source's extracted text; for a PDF the whole text with its `[page n]` headers."),
    end: z.number().optional(),
    text: z.string().optional().describe("The source's text at [start, end)."),
    score: z.number().optional().describe("For fuzzy matches: the similarity, 0.8 to 1."),
    reason: z
      .enum(["not_found", "too_short", "contradicted", "budget"])
      .optional()
      .describe("For none: not in any source, too short to ground (one character), a boolean the source states otherwise, or not aligned within the time and work budget."),
  })
  .apply(named({ id: "GroundedLeaf", description: "Where one string, number, boolean or date value of a generated object came from." })) satisfies z.ZodType<GroundedLeaf>;

const groundingList = z.array(groundedLeafSchema).describe("With `grounding: true`: each leaf of the object, in document order, and where it was found.");

export const generateObjectResponse = z
  .strictObject({ object: z.unknown().describe("The generated value; it validates against the request's schema."), metadata: metadataSchema, grounding: groundingList.optional() })
  .apply(named({ id: "GenerateObjectResponse" }));

export const generateTextResponse = z.strictObject({ text: z.string(), metadata: metadataSchema }).apply(named({ id: "GenerateTextResponse" }));

export const queuedRunResponse = z
  .strictObject({ runId: z.string(), status: z.literal("queued") })
  .apply(named({ id: "QueuedRun", description: "An asynchronous run (Prefer: respond-async), stored and waiting; its result goes to the callback and GET /api/v1/runs/{id}." }));

export const streamItemSchema = z
  .strictObject({ type: z.literal("object"), object: z.strictObject({ text: z.string() }) })
  .apply(named({ id: "StreamItem", description: "The next piece of the generated JSON text." }));

export const streamFieldSchema = z
  .strictObject({
    type: z.literal("field"),
    attempt: z.number().int().describe("The attempt it belongs to; a later `restart` voids it."),
    pointer: z.string().describe('JSON Pointer of the value in the object ("" is the whole object).'),
    value: z.unknown().describe("The complete value."),
    valid: z
      .boolean()
      .nullable()
      .describe("Whether the value holds against its own subschema; null when that cannot be decided alone (anyOf, if, … on its path). The whole object's validation still rules."),
  })
  .apply(named({ id: "StreamField", description: "With `?fields=true`: a value of the streamed object is complete (SSE `event: field`)." }));

export const streamDataSchema = z
  .union([streamItemSchema, streamFieldSchema])
  .apply(named({ id: "StreamData", description: "A stream's data: StreamItem values, and with `?fields=true` StreamField ones; then `done` or `error` (restart, done and error: see the operation)." }));

const attachmentMeta = z
  .strictObject({
    index: z.number(),
    source: z.enum(["inline", "url"]),
    url: z.string().optional(),
    mimeType: z.string(),
    bytes: z.number(),
    sha256: z.string(),
    textChars: z.number().describe("Characters of text that reached the prompt."),
  })
  .apply(named({ id: "AttachmentRecord" }));

export const runSchema = z
  .strictObject({
    id: z.string(),
    operation: z.enum(RUN_OPERATIONS),
    workflowSlug: z.string(),
    status: z.enum(RUN_STATUSES),
    input: z.string(),
    schema: z.unknown().nullable(),
    contextSlugs: z.array(z.string()),
    contextChunks: z.array(z.string()).describe("For contexts too large for the model's window: the chunks the run used."),
    workflowVersion: z.string().nullable().describe('"config" for workflows of genserve.yaml, else the API version the run used.'),
    workflowLabel: z.string().nullable().describe("The label the workflow was resolved through (`slug@staging`, or `production` for a plain slug); null otherwise."),
    draft: runDraftSchema.nullable().describe("A draft run's definition (unsaved edits of `workflowVersion`) and what differs from it; null for runs of saved versions."),
    contextVersions: z.record(z.string(), z.string()),
    promptHash: z.string().nullable().describe("SHA-256 of exactly what the model was sent."),
    schemaHash: z.string().nullable(),
    attachments: z.array(attachmentMeta),
    callback: callbackSchema.nullable().describe("Header values are never shown again: `[hidden]`."),
    output: z.unknown().nullable(),
    error: problemSchema.nullable(),
    metadata: metadataSchema,
    attempts: z.number(),
    decoding: z
      .enum(DECODING_MODES)
      .nullable()
      .describe("How the output was held to the schema: a grammar for the whole schema, a grammar for part of it, the provider's native structured output, the prompt only; none for text."),
    promptTokens: z.number().nullable().describe("The prompt in the model's own tokens, counted before the run (local models); null where the engine cannot count exactly."),
    outputTokenLimit: z.number().nullable().describe("The most output tokens the model was allowed: the workflow's limit, cut to what the context window left (local models)."),
    createdAt: z.string(),
    finishedAt: z.string().nullable(),
    traceId: z.string().nullable().describe("The W3C trace the run belongs to: the caller's `traceparent`, or the one genserve started when tracing is on."),
    evaluationId: z.string().nullable().describe("The test-suite evaluation the run was made for (a case or a judge run); null for others."),
  })
  .apply(named({ id: "Run" }));

const deliveryAttempt = z
  .strictObject({ attemptedAt: z.string(), statusCode: z.number().nullable(), error: z.string().nullable(), durationMs: z.number(), nextAttemptAt: z.string().nullable() })
  .apply(named({ id: "DeliveryAttempt" }));

export const runDetailSchema = runSchema
  .extend({
    grounding: groundingList.nullable().describe("For an object run asked for `grounding: true`: where each leaf of its output was found; null otherwise."),
    history: z
      .array(z.strictObject({ role: z.enum(["user", "assistant"]), content: z.string() }))
      .nullable()
      .describe("The earlier messages the request itself gave (OpenAI's chat completions, a suite case), oldest first, as the model was sent them before the input; a replay sends them again. Null when none (a thread's history is in the thread)."),
    deliveries: z
      .object({
        eventId: z.string(),
        url: z.string(),
        status: z.enum(["pending", "delivered", "dead"]),
        attempts: z.number(),
        nextAttemptAt: z.string().nullable(),
        log: z.array(deliveryAttempt),
      })
      .nullable()
      .describe("The callback event's delivery: each attempt, and the next one. Null for streamed runs and runs still going."),
  })
  .apply(named({ id: "RunDetail" }));

export const runListItemSchema = runSchema
  .extend({
    input: z.string().describe("The input's first `limits.runPreviewChars` characters (2,048); GET /api/v1/runs/{id} has it whole."),
    inputBytes: z.number().describe("The whole input's size in UTF-8 bytes."),
    schema: z.unknown().nullable().describe("Whole when its JSON text is within the preview; otherwise null and named in `truncated`."),
    output: z.unknown().nullable().describe("Whole when its JSON text is within the preview; otherwise null and named in `truncated` (see `outputPreview`)."),
    outputPreview: z.string().nullable().describe("The output's start, up to the preview's characters: a string output's text, any other output's JSON text. Null without output."),
    outputBytes: z.number().describe("The output's JSON text in UTF-8 bytes (0 without output)."),
    callback: callbackSchema.nullable().describe("Whole (header values `[hidden]`) when its JSON text is within the preview; otherwise null and named in `truncated`."),
    error: problemSchema.nullable().describe("The run's problem, without `lastOutput` (on the run itself)."),
    draft: runDraftSchema.nullable().describe("A draft run's record, whole when its JSON text is within the preview; otherwise null and named in `truncated` (a draft run either way)."),
    truncated: z.array(z.enum(["input", "schema", "output", "callback", "draft"])).describe("The fields cut to their preview or left out; the run itself has them whole."),
  })
  .apply(named({ id: "RunListItem", description: "A run as lists show it: large fields previewed, the run itself (GET /api/v1/runs/{id}) has them whole." }));

export const runPageSchema = z
  .strictObject({
    runs: z.array(runListItemSchema),
    nextCursor: z
      .string()
      .nullable()
      .describe("Pass as `cursor` for the next page; null on the last. A search (`q`) that reached its bound returns what it found so far (possibly no runs) with a cursor to search on."),
  })
  .apply(named({ id: "RunPage" }));

export const redeliveryResponse = z.strictObject({ eventId: z.string(), status: z.literal("pending") }).apply(named({ id: "Redelivery" }));

export const runCancellationSchema = z
  .strictObject({
    id: z.string(),
    status: z.enum(RUN_STATUSES).describe('Once ended: "cancelled", with the problem `cancelled` as `error` (whose `lastOutput` is a streamed run\'s output so far). Still "running" (202): it is being stopped where it executes.'),
    error: problemSchema.nullable(),
  })
  .apply(named({ id: "RunCancellation", description: "Where a cancelled run is: ended (200) or being stopped (202)." }));

const versioned = {
  version: z.string().describe('"config" for entries of genserve.yaml (read-only through the API), else the version number.'),
  source: z.enum(["config", "api"]),
};

const workflowExample = z
  .strictObject({ input: z.string(), schema: z.record(z.string(), z.unknown()).optional() })
  .optional()
  .describe("An input (and for object runs a schema) to start from, as the workflow's author gave it.");

export const workflowSummary = z
  .strictObject({ slug: z.string(), description: z.string(), model: z.string(), contexts: z.array(z.string()), instructionsChars: z.number(), example: workflowExample, ...versioned })
  .apply(named({ id: "Workflow" }));

export const workflowListSchema = z.strictObject({ workflows: z.array(workflowSummary) }).apply(named({ id: "WorkflowList" }));

export const workflowDefinition = z
  .strictObject({
    slug: z.string(),
    description: z.string(),
    note: z.string().optional().describe("What this version changed, as saved with it."),
    model: z.string(),
    instructions: z.string(),
    temperature: z.number().optional(),
    maxOutputTokens: z.number().optional(),
    retries: z.number(),
    timeoutMs: z.number(),
    contexts: z.array(z.string()),
    example: workflowExample,
    schema: z.record(z.string(), z.unknown()).optional().describe("The default schema of object runs that send none."),
    contextVersions: z.record(z.string(), z.string()).optional().describe("The context versions this workflow version was saved with (absent: the latest are used)."),
    label: z.string().nullable().optional().describe("The label the reference resolved through, when one did."),
    ...versioned,
  })
  .apply(named({ id: "WorkflowDefinition" }));

export const contextSummary = z.strictObject({ slug: z.string(), title: z.string(), size: z.number().describe("Characters."), ...versioned }).apply(named({ id: "Context" }));

export const contextListSchema = z.strictObject({ contexts: z.array(contextSummary) }).apply(named({ id: "ContextList" }));

export const contextDefinition = z.strictObject({ slug: z.string(), title: z.string(), content: z.string(), ...versioned }).apply(named({ id: "ContextDefinition" }));

export const schemaCheckSchema = z
  .strictObject({
    accepted: z.boolean().describe("Whether object runs would take this schema (no problems)."),
    problems: z.array(z.strictObject({ path: z.string(), message: z.string() })).describe("What a run would refuse the schema for (400 validation_failed), by JSON Pointer into the request."),
    warnings: z.array(z.string()).describe("What would be tolerated, and recorded on each run."),
    model: z.strictObject({ alias: z.string(), provider: z.string() }).nullable().describe("The workflow's model; null without workflowSlug."),
    support: z
      .strictObject({
        mode: z.enum(["grammar", "provider", "prompt"]),
        exact: z.boolean(),
        strict: z.boolean().optional(),
        notes: z.array(z.string()),
      })
      .nullable()
      .describe(
        "How the model holds outputs to the schema: `grammar` (local engine; `exact` when every keyword is in the grammar, else `notes` lists what is checked after generation), `provider` (native structured output; for OpenAI, `strict` and what keeps strict mode off) or `prompt`. Every output is validated either way. Null when the schema is refused or no workflow is given.",
      ),
  })
  .apply(named({ id: "SchemaCheck" }));

export const threadSchema = z
  .strictObject({
    id: z.string(),
    workflowSlug: z.string(),
    createdAt: z.string(),
    updatedAt: z.string(),
    messageCount: z.number().describe("Messages in the whole thread (two a turn), at most `limits.threadMessages`."),
    bytes: z.number().describe("UTF-8 bytes of all its messages' content, refused past `limits.threadBytes` (409 thread_full)."),
    messages: z
      .array(
        z.strictObject({
          role: z.enum(["user", "assistant"]),
          content: z.string(),
          runId: z.string().nullable(),
          createdAt: z.string(),
          bytes: z.number().describe("The whole message's UTF-8 bytes."),
          truncated: z.boolean().describe("The message is larger than a page (`limits.threadPageBytes`) and `content` is its start; its run has it whole."),
        }),
      )
      .describe("One page of the messages, in the order asked (`order`, oldest first by default), within `limit` and `limits.threadPageBytes` of content."),
    nextCursor: z.string().nullable().describe("Pass as `cursor` (with the same `order`) for the next page; null on the last."),
  })
  .apply(named({ id: "Thread" }));

export const keyLimitsSchema = z
  .strictObject({
    rpm: z.number().nullable(),
    tpm: z.number().nullable(),
    concurrency: z.number().nullable(),
    workflows: z.array(z.string()).nullable(),
    budgetDailyUsd: z.string().nullable(),
    budgetMonthlyUsd: z.string().nullable(),
  })
  .apply(named({ id: "KeyLimits", description: "null: no limit." })) satisfies z.ZodType<LimitsView>;

export const quotaSchema = z
  .strictObject({
    policy: z.enum(["rpm", "tpm", "concurrency", "daily", "monthly"]),
    unit: z.enum(["runs", "tokens", "usd"]),
    limit: z.string(),
    used: z.string(),
    reserved: z.string().describe("Held by runs in progress (their worst case) until they settle."),
    remaining: z.string(),
    resetsAt: z.string().nullable(),
  })
  .apply(named({ id: "Quota", description: "One limit of a key as it stands now; amounts are decimal strings (runs, tokens or US dollars)." })) satisfies z.ZodType<Quota>;

export const apiKeySchema = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    prefix: z.string().describe("The key's first characters, to recognise it by."),
    admin: z.boolean().describe('role === "admin" (kept from before roles).'),
    role: roleSchema,
    projectId: z.string(),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
    limits: keyLimitsSchema,
  })
  .apply(named({ id: "ApiKey" }));

export const apiKeyDetailSchema = apiKeySchema.extend({ quotas: z.array(quotaSchema) }).apply(named({ id: "ApiKeyDetail" }));

export const keyListSchema = z.strictObject({ keys: z.array(apiKeySchema) }).apply(named({ id: "ApiKeyList" }));

export const createdKeySchema = apiKeySchema
  .extend({
    key: z.string().describe("The key itself: shown once, never stored."),
    webhookSecret: z.string().describe("Signs the callback events of this key's runs (Standard Webhooks)."),
  })
  .apply(named({ id: "CreatedApiKey" }));

const held = z.strictObject({ used: z.number(), limit: z.number() });

/** What the key holds of what it may hold a limited number of (limits.*PerKey; share links: those that still work). */
export const storageQuotasSchema = z
  .strictObject({ inboxes: held, shares: held, threads: held, suites: held })
  .apply(named({ id: "StorageQuotas", description: "What the key holds of each resource capped per key (`quota_exceeded` past a limit)." }));

export const meSchema = z
  .strictObject({ keyId: z.string(), name: z.string(), admin: z.boolean().describe('role === "admin"'), role: roleSchema, project: projectSchema, limits: keyLimitsSchema, quotas: z.array(quotaSchema), storage: storageQuotasSchema })
  .apply(named({ id: "Me" }));

export const modelStatusSchema = z
  .strictObject({
    alias: z.string(),
    provider: z.string(),
    vision: z.boolean().describe("Whether image attachments are passed to this model (configured `vision`); runs with images on other models answer 422."),
    status: z.strictObject({
      state: z.enum(["downloading", "loading", "ready", "unavailable"]).describe("downloading: an admin's retried download is under way; then loading, ready, or unavailable again."),
      name: z.string().optional(),
      contextSize: z.number().optional(),
      parallel: z.number().optional(),
      downloadedBytes: z.number().optional().describe("While downloading: bytes so far."),
      totalBytes: z.number().optional().describe("While downloading: the file's size (0 until known)."),
      detail: z.string().optional().describe("Why the model is unavailable."),
      fix: z.string().optional().describe("What to do about it."),
    }),
  })
  .apply(named({ id: "ModelStatus", description: "A configured model and whether it can run." }));

export const modelListSchema = z.strictObject({ models: z.array(modelStatusSchema) }).apply(named({ id: "ModelList" }));

export const inboxSchema = z.strictObject({ id: z.string(), url: z.string() }).apply(named({ id: "Inbox" }));

export const inboxEventsSchema = z
  .strictObject({
    id: z.string(),
    url: z.string(),
    events: z.array(z.strictObject({ receivedAt: z.string(), headers: z.record(z.string(), z.string()), body: z.unknown(), verified: z.boolean().describe("Whether the Standard Webhooks signature checked out.") })),
    nextCursor: z.string().nullable().describe("Pass as `cursor` for the older deliveries; null when this page holds the oldest."),
  })
  .apply(named({ id: "InboxEvents" }));

export const usageReportSchema = z
  .strictObject({
    from: z.string(),
    to: z.string(),
    groupBy: z.enum(["workflow", "model", "key"]),
    bucket: z.enum(["hour", "day"]),
    groups: z.array(
      z.strictObject({
        group: z.string().describe("The workflow slug, the model's name as the provider reported it, or the key id."),
        runs: z.number(),
        errors: z.number().describe("The runs that did not succeed (failed or cancelled)."),
        inputTokens: z.number(),
        outputTokens: z.number(),
        costUsd: z.string(),
        durationMsP50: z.number().nullable(),
        durationMsP95: z.number().nullable(),
      }),
    ),
    series: z.array(z.strictObject({ at: z.string().describe("Start of the hour or day (UTC)."), runs: z.number(), errors: z.number(), costUsd: z.string() })),
  })
  .apply(named({ id: "UsageReport", description: "Finished runs created in [from, to): per group, largest cost first, and per hour or day." }));
