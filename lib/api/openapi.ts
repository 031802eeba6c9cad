import { z } from "zod";
import { ERROR_CODES } from "../errors";
import { RUN_STATUSES } from "../domain/runs";
import { checkSchemaRequest, createKeyRequest, createThreadRequest, generateObjectRequest, generateTextRequest, streamObjectRequest, updateKeyRequest } from "./requests";
import * as responses from "./responses";
import * as lifecycle from "./lifecycle";
import * as suites from "./suites";
import { apiShapes } from "./registry";

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
const pathParam = (name: string) => ({ name, in: "path", required: true, schema: { type: "string" } });
/** A JSON response of a registered shape. */
const body = (description: string, id: string, headers?: Record<string, unknown>) => ({ description, ...(headers && { headers }), content: { "application/json": { schema: ref(id) } } });

/**
 * Components generated from the same zod schemas that validate requests (requests.ts) and build
 * responses (responses.ts): every named shape is in `apiShapes` (registry.ts: this copy of the
 * modules' own, never zod's global registry, which every bundled copy of them would fill again).
 */
function components(): Record<string, unknown> {
  void [checkSchemaRequest, generateObjectRequest, generateTextRequest, streamObjectRequest, createThreadRequest, createKeyRequest, updateKeyRequest, responses, suites, lifecycle];
  const out = z.toJSONSchema(apiShapes, { target: "draft-2020-12", io: "input", uri: (id) => `#/components/schemas/${id}`, unrepresentable: "any" });
  const schemas = out.schemas as Record<string, Record<string, unknown>>;
  for (const schema of Object.values(schemas)) {
    delete schema.$schema;
    delete schema.$id;
  }
  return schemas;
}

const problemResponses = (codes: (keyof typeof ERROR_CODES)[]) =>
  Object.fromEntries(
    [...new Set(codes.map((c) => ERROR_CODES[c].status))].map((status) => [
      String(status),
      {
        description: codes.filter((c) => ERROR_CODES[c].status === status).join(", "),
        content: { "application/problem+json": { schema: ref("Problem") } },
      },
    ]),
  );

const runErrors = [
  "validation_failed",
  "unauthorized",
  "workflow_not_found",
  "context_not_found",
  "payload_too_large",
  "unsupported_media_type",
  "attachment_fetch_refused",
  "attachment_unreadable",
  "attachment_unsupported",
  "attachment_fetch_failed",
  "forbidden",
  "rate_limited",
  "budget_exceeded",
  "model_error",
  "output_invalid",
  "schema_timeout",
  "model_timeout",
  "model_busy",
  "model_unavailable",
  "quota_exceeded",
  "storage_full",
  "internal",
] as (keyof typeof ERROR_CODES)[];

/** Errors only an object operation can end with. */
const objectOnly = new Set<string>(["output_invalid", "schema_timeout"]);

/** The run operations' one query parameter: a caller that goes away stops the run. */
const cancelOnDisconnect = {
  name: "cancelOnDisconnect",
  in: "query",
  required: false,
  description:
    "`true`: if the client disconnects before the response is complete (an aborted request), the run stops at once — the model call is aborted and the run is recorded failed with `cancelled`, billed for what it used. Otherwise the run completes and is recorded. Not for `Prefer: respond-async`.",
  schema: { type: "string", enum: ["true", "false"] },
};

const runIdHeader = {
  "X-Run-ID": { description: "The run's id (same as metadata.runId).", schema: { type: "string" } },
  "RateLimit-Policy": {
    description: 'The key\'s rate and concurrency limits (IETF draft-ietf-httpapi-ratelimit-headers), e.g. `"rpm";q=60;w=60, "tpm";q=100000;w=60;qu="tokens"`. Absent when the key has none.',
    schema: { type: "string" },
  },
  RateLimit: { description: 'What remains of each policy and the seconds until its window resets, e.g. `"rpm";r=59;t=42`.', schema: { type: "string" } },
};

export function buildOpenApiDocument(version: string): Record<string, unknown> {
  return {
    openapi: "3.1.0",
    info: {
      title: "genserve API",
      version,
      description:
        "Structured objects, streams and text from named workflows. Every operation needs the `Api-Key` header. Errors are RFC 9457 problem details with a stable `code`.",
    },
    servers: [{ url: "/" }],
    security: [{ apiKey: [] }],
    paths: {
      "/api/v1/generate/object": {
        post: {
          operationId: "generateObject",
          parameters: [cancelOnDisconnect],
          summary: "Generate one JSON value that validates against the given schema",
          requestBody: { required: true, content: { "application/json": { schema: ref("GenerateObjectRequest") } } },
          responses: {
            "200": body("The validated object and run metadata.", "GenerateObjectResponse", runIdHeader),
            "202": body("Prefer: respond-async — the run is queued.", "QueuedRun", runIdHeader),
            ...problemResponses([...runErrors, "idempotency_in_progress", "idempotency_mismatch", "run_queue_full"]),
          },
        },
      },
      "/api/v1/stream/object": {
        post: {
          operationId: "streamObject",
          parameters: [cancelOnDisconnect],
          summary: "Stream a JSON value as it is generated",
          description:
            "Server-Sent Events by default; NDJSON with `Accept: application/x-ndjson`. Data items are StreamItem values whose `text` pieces concatenate to the final JSON document. The stream ends with `event: done` (`{runId, object, metadata}`) or `event: error` (a Problem); `event: restart` means a retry began and earlier items must be discarded.",
          requestBody: { required: true, content: { "application/json": { schema: ref("StreamObjectRequest") } } },
          responses: {
            "200": {
              description: "The stream.",
              headers: runIdHeader,
              content: { "text/event-stream": { schema: ref("StreamItem") }, "application/x-ndjson": { schema: ref("StreamItem") } },
            },
            ...problemResponses([...runErrors, "thread_not_found", "thread_full"]),
          },
        },
      },
      "/api/v1/generate/text": {
        post: {
          operationId: "generateText",
          parameters: [cancelOnDisconnect],
          summary: "Generate text",
          requestBody: { required: true, content: { "application/json": { schema: ref("GenerateTextRequest") } } },
          responses: {
            "200": body("The text and run metadata.", "GenerateTextResponse", runIdHeader),
            "202": body("Prefer: respond-async — the run is queued.", "QueuedRun", runIdHeader),
            ...problemResponses([...runErrors.filter((c) => !objectOnly.has(c)), "idempotency_in_progress", "idempotency_mismatch", "run_queue_full"]),
          },
        },
      },
      "/api/v1/runs": {
        get: {
          operationId: "listRuns",
          summary: "List runs, newest first (a key sees its own; an admin key sees all)",
          parameters: [
            { name: "workflowSlug", in: "query", schema: { type: "string" } },
            { name: "status", in: "query", schema: { enum: [...RUN_STATUSES] } },
            { name: "operation", in: "query", schema: { enum: ["generate.object", "generate.text", "stream.object"] } },
            { name: "evaluationId", in: "query", schema: { type: "string" }, description: "Only the runs an evaluation made (its cases and judges)." },
            { name: "q", in: "query", schema: { type: "string", minLength: 1, maxLength: 200 }, description: "Only runs whose input contains this text (ignoring case) within its first `limits.runSearchChars` characters (16,384), or whose id it is. One request reads at most `limits.runSearchBytes` (64 MiB) of inputs: past it the page holds what was found (possibly nothing) and a `nextCursor` to search on." },
            { name: "from", in: "query", schema: { type: "string", format: "date-time" }, description: "Only runs created at or after this instant." },
            { name: "to", in: "query", schema: { type: "string", format: "date-time" }, description: "Only runs created before this instant." },
            { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 100, default: 20 } },
            { name: "cursor", in: "query", schema: { type: "string" }, description: "`nextCursor` of the previous page." },
          ],
          responses: {
            "200": body("A page of runs.", "RunPage"),
            ...problemResponses(["validation_failed", "unauthorized"]),
          },
        },
      },
      "/api/v1/runs/{id}": {
        get: {
          operationId: "getRun",
          summary: "One run",
          parameters: [pathParam("id")],
          responses: { "200": body("The run, with its callback's deliveries.", "RunDetail"), ...problemResponses(["unauthorized", "run_not_found"]) },
        },
      },
      "/api/v1/runs/{id}/stream": {
        get: {
          operationId: "resumeStream",
          summary: "Resume a streamed run: events after Last-Event-ID, then the live run to its final event",
          description:
            "Send `Last-Event-ID: N` (or `?lastEventId=N`) with the id of the last event you received. Events are kept for `limits.streamRetentionMs` (10 minutes) after the run ends; later, only the final event (from the stored run) is sent.",
          parameters: [
            pathParam("id"),
            { name: "Last-Event-ID", in: "header", schema: { type: "string" } },
          ],
          responses: {
            "200": { description: "The stream.", content: { "text/event-stream": { schema: ref("StreamItem") }, "application/x-ndjson": { schema: ref("StreamItem") } } },
            ...problemResponses(["unauthorized", "run_not_found", "stream_unavailable"]),
          },
        },
      },
      "/api/v1/schemas/check": {
        post: {
          operationId: "checkSchema",
          summary: "What an object run would make of a schema, for a workflow's model, without running anything",
          requestBody: { required: true, content: { "application/json": { schema: ref("CheckSchemaRequest") } } },
          responses: {
            "200": body("Problems that would refuse the schema, warnings, and how the workflow's model holds outputs to it.", "SchemaCheck"),
            ...problemResponses(["validation_failed", "unauthorized", "forbidden", "workflow_not_found"]),
          },
        },
      },
      "/api/v1/threads": {
        post: {
          operationId: "createThread",
          summary: "Create a conversation thread (owned by this key)",
          requestBody: { required: true, content: { "application/json": { schema: ref("CreateThreadRequest") } } },
          responses: {
            "201": body("The thread.", "Thread"),
            ...problemResponses(["validation_failed", "unauthorized", "workflow_not_found", "conflict", "quota_exceeded", "storage_full"]),
          },
        },
      },
      "/api/v1/threads/{id}": {
        get: {
          operationId: "getThread",
          summary: "A thread with a page of its messages",
          parameters: [
            pathParam("id"),
            { name: "order", in: "query", schema: { enum: ["asc", "desc"], default: "asc" }, description: "Oldest first (asc) or newest first (desc)." },
            { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 200, default: 100 } },
            { name: "cursor", in: "query", schema: { type: "string" }, description: "`nextCursor` of the previous page (same `order`)." },
          ],
          responses: {
            "200": body("The thread, its size, and a page of its messages within `limit` and `limits.threadPageBytes` (1 MiB) of content.", "Thread"),
            ...problemResponses(["validation_failed", "unauthorized", "thread_not_found"]),
          },
        },
        delete: {
          operationId: "deleteThread",
          summary: "Delete a thread and its messages",
          parameters: [pathParam("id")],
          responses: { "204": { description: "Deleted." }, ...problemResponses(["unauthorized", "thread_not_found"]) },
        },
      },
      "/api/v1/workflows": {
        get: {
          operationId: "listWorkflows",
          summary: "Configured workflows",
          responses: {
            "200": body("Workflows.", "WorkflowList"),
            ...problemResponses(["unauthorized"]),
          },
        },
      },
      "/api/v1/workflows/{slug}": {
        get: {
          operationId: "getWorkflow",
          summary: "A workflow's definition: `slug` (its production label, else the latest), `slug@4`, `slug@config` or `slug@label`",
          parameters: [pathParam("slug")],
          responses: { "200": body("The workflow, with its version and source.", "WorkflowDefinition"), ...problemResponses(["unauthorized", "workflow_not_found"]) },
        },
        put: {
          operationId: "putWorkflow",
          summary: "Create or change an API-managed workflow (admin keys); each change is a new version",
          parameters: [pathParam("slug")],
          requestBody: { required: true, content: { "application/json": { schema: { type: "object", description: "The workflow fields of genserve.yaml: model, description, instructions, temperature, maxOutputTokens, retries, timeoutMs, contexts, example, schema (the default schema of object runs). Contexts are pinned to their current versions." } } } },
          responses: { "200": body("Changed.", "WorkflowDefinition"), "201": body("Created.", "WorkflowDefinition"), ...problemResponses(["validation_failed", "unauthorized", "forbidden", "conflict"]) },
        },
        delete: {
          operationId: "deleteWorkflow",
          summary: "Delete an API-managed workflow (admin keys)",
          parameters: [pathParam("slug")],
          responses: { "204": { description: "Deleted." }, ...problemResponses(["unauthorized", "forbidden", "workflow_not_found", "conflict"]) },
        },
      },
      "/api/v1/workflows/{slug}/versions": {
        get: {
          operationId: "listWorkflowVersions",
          summary: "Every version of a workflow, oldest first, with the labels pointing at each",
          parameters: [pathParam("slug")],
          responses: { "200": body("The versions.", "WorkflowVersions"), ...problemResponses(["validation_failed", "unauthorized", "workflow_not_found"]) },
        },
      },
      "/api/v1/workflows/{slug}/labels": {
        get: {
          operationId: "listWorkflowLabels",
          summary: "Where each label points, and every move (who, when, from which version, the evaluation that gated it)",
          parameters: [pathParam("slug")],
          responses: { "200": body("The labels.", "WorkflowLabels"), ...problemResponses(["validation_failed", "unauthorized", "workflow_not_found"]) },
        },
      },
      "/api/v1/workflows/{slug}/labels/{label}": {
        put: {
          operationId: "moveWorkflowLabel",
          summary: "Point a label at a version now (admin keys); rollback is moving it back",
          parameters: [pathParam("slug"), pathParam("label")],
          requestBody: { required: true, content: { "application/json": { schema: ref("MoveLabelRequest") } } },
          responses: { "200": body("Moved.", "LabelMove"), ...problemResponses(["validation_failed", "unauthorized", "forbidden", "workflow_not_found", "unsupported_media_type"]) },
        },
        post: {
          operationId: "promoteWorkflow",
          summary: "Promote a version to a label, gated by a test suite (admin keys)",
          description: "With `requireSuite`, the suite is evaluated against `slug@version` and the label moves only if the pass rate reaches `minPass` (default 1); the answer is 202 with the evaluation, and the label's history records the outcome either way. Without it, the label moves at once (200).",
          parameters: [pathParam("slug"), pathParam("label")],
          requestBody: { required: true, content: { "application/json": { schema: ref("PromoteRequest") } } },
          responses: {
            "200": body("Moved.", "LabelMove"),
            "202": body("The evaluation deciding the promotion is queued.", "PromotionStarted", { Location: { description: "The evaluation.", schema: { type: "string" } } }),
            ...problemResponses(["validation_failed", "unauthorized", "forbidden", "workflow_not_found", "suite_not_found", "unsupported_media_type", "evaluation_queue_full"]),
          },
        },
        delete: {
          operationId: "removeWorkflowLabel",
          summary: "Remove a label (admin keys)",
          parameters: [pathParam("slug"), pathParam("label")],
          responses: { "204": { description: "Removed." }, ...problemResponses(["validation_failed", "unauthorized", "forbidden", "workflow_not_found"]) },
        },
      },
      "/api/v1/workflows/{slug}/diff": {
        get: {
          operationId: "diffWorkflowVersions",
          summary: "What changed between two versions: instructions (line diff), parameters, contexts, and the default schema with each change classified breaking or not",
          parameters: [pathParam("slug"), { name: "from", in: "query", required: true, schema: { type: "string" } }, { name: "to", in: "query", required: true, schema: { type: "string" } }],
          responses: { "200": body("The diff.", "WorkflowDiff"), ...problemResponses(["validation_failed", "unauthorized", "workflow_not_found"]) },
        },
      },
      "/api/v1/runs/{id}/cancel": {
        post: {
          operationId: "cancelRun",
          summary: "Cancel a queued or running run (the key that made it, or an admin key), on whichever process executes it",
          description:
            "The model call is aborted and the run ends `cancelled` (its `error` the problem `cancelled`), its tokens so far recorded and billed, a streamed run's output so far in the problem's `lastOutput`, and its `run.cancelled` callback sent. Streams following the run end with that problem. A run executing on another process sharing PostgreSQL is stopped within milliseconds (NOTIFY), at worst at that process's next heartbeat (`limits.runLeaseMs / 3`). Cancelling a cancelled run answers it again; any other finished run is a 409 `run_finished`.",
          parameters: [pathParam("id")],
          responses: {
            "200": body("The run ended cancelled.", "RunCancellation"),
            "202": body("The cancel is recorded; the run is being stopped where it executes.", "RunCancellation"),
            ...problemResponses(["unauthorized", "run_not_found", "run_finished"]),
          },
        },
      },
      "/api/v1/runs/{id}/replay": {
        post: {
          operationId: "replayRun",
          summary: "Run a stored run's request again with the same bundle (workflow and context versions, schema, attachments by hash), or on another version or label",
          parameters: [pathParam("id")],
          requestBody: { required: false, content: { "application/json": { schema: ref("ReplayRequest") } } },
          responses: { "201": body("The replay, with the differences from the original.", "Replay"), ...problemResponses([...runErrors, "run_not_found", "conflict"]) },
        },
      },
      "/api/v1/runs/{id}/share": {
        post: {
          operationId: "shareRun",
          summary: "A read-only link to a run that needs no key (hidden fields masked)",
          parameters: [pathParam("id")],
          requestBody: { required: false, content: { "application/json": { schema: ref("CreateShareRequest") } } },
          responses: { "201": body("The link (its URL is shown only now).", "Share"), ...problemResponses(["validation_failed", "unauthorized", "run_not_found", "unsupported_media_type", "quota_exceeded", "storage_full"]) },
        },
      },
      "/api/v1/evaluations/{id}/share": {
        post: {
          operationId: "shareEvaluation",
          summary: "A read-only link to an evaluation report that needs no key",
          parameters: [pathParam("id")],
          requestBody: { required: false, content: { "application/json": { schema: ref("CreateShareRequest") } } },
          responses: { "201": body("The link (its URL is shown only now).", "Share"), ...problemResponses(["validation_failed", "unauthorized", "evaluation_not_found", "unsupported_media_type", "quota_exceeded", "storage_full"]) },
        },
      },
      "/api/v1/shares": {
        get: {
          operationId: "listShares",
          summary: "The key's share links (an admin key's: all)",
          responses: { "200": body("Links.", "ShareList"), ...problemResponses(["unauthorized"]) },
        },
      },
      "/api/v1/shares/{id}": {
        delete: {
          operationId: "revokeShare",
          summary: "Revoke a share link (the key that made it, or an admin); it answers 404 from then on",
          parameters: [pathParam("id")],
          responses: { "204": { description: "Revoked." }, ...problemResponses(["unauthorized", "share_not_found"]) },
        },
      },
      "/api/v1/shared/{token}": {
        get: {
          operationId: "getShared",
          summary: "What a share link shows; needs no key",
          security: [],
          parameters: [pathParam("token")],
          responses: { "200": body("The shared run or report.", "SharedView"), ...problemResponses(["share_not_found"]) },
        },
      },
      "/api/v1/contexts/{slug}": {
        get: {
          operationId: "getContext",
          summary: "A context with its content",
          parameters: [pathParam("slug")],
          responses: { "200": body("The context.", "ContextDefinition"), ...problemResponses(["unauthorized", "context_not_found"]) },
        },
        put: {
          operationId: "putContext",
          summary: "Create or change an API-managed context `{title?, content}` (admin keys); each change is a new version",
          parameters: [pathParam("slug")],
          requestBody: { required: true, content: { "application/json": { schema: { type: "object", properties: { title: { type: "string" }, content: { type: "string" } }, required: ["content"] } } } },
          responses: { "200": body("Changed.", "ContextDefinition"), "201": body("Created.", "ContextDefinition"), ...problemResponses(["validation_failed", "unauthorized", "forbidden", "conflict"]) },
        },
        delete: {
          operationId: "deleteContext",
          summary: "Delete an API-managed context (admin keys)",
          parameters: [pathParam("slug")],
          responses: { "204": { description: "Deleted." }, ...problemResponses(["unauthorized", "forbidden", "context_not_found", "conflict"]) },
        },
      },
      "/api/v1/me": {
        get: { operationId: "me", summary: "The calling key, its limits and how much of each is used now", responses: { "200": body("The key.", "Me"), ...problemResponses(["unauthorized"]) } },
      },
      "/api/v1/usage": {
        get: {
          operationId: "getUsage",
          summary: "Runs, errors, tokens, cost and p50/p95 duration of finished runs, per workflow, model or key and per hour or day (a key sees its own; admin keys all)",
          parameters: [
            { name: "from", in: "query", schema: { type: "string", format: "date-time" }, description: "Default: 7 days before `to`." },
            { name: "to", in: "query", schema: { type: "string", format: "date-time" }, description: "Default: now." },
            { name: "groupBy", in: "query", schema: { enum: ["workflow", "model", "key"], default: "workflow" } },
            { name: "bucket", in: "query", schema: { enum: ["hour", "day"] }, description: "Default: hour for ranges up to 2 days, else day." },
            { name: "keyId", in: "query", schema: { type: "string" }, description: "Admin keys: one key only." },
          ],
          responses: { "200": body("The report.", "UsageReport"), ...problemResponses(["validation_failed", "unauthorized"]) },
        },
      },
      "/api/v1/keys": {
        get: { operationId: "listKeys", summary: "Every API key (admin keys); never the keys themselves", responses: { "200": body("Keys.", "ApiKeyList"), ...problemResponses(["unauthorized", "forbidden"]) } },
        post: {
          operationId: "createKey",
          summary: "Create a key with optional limits and budgets (admin keys); the key is in this response only",
          requestBody: { required: true, content: { "application/json": { schema: ref("CreateKeyRequest") } } },
          responses: { "201": body("The key, with the key itself and its signing secret.", "CreatedApiKey"), ...problemResponses(["validation_failed", "unauthorized", "forbidden"]) },
        },
      },
      "/api/v1/keys/{id}": {
        get: {
          operationId: "getKey",
          summary: "One key with its quotas as they stand (admin keys)",
          parameters: [pathParam("id")],
          responses: { "200": body("The key.", "ApiKeyDetail"), ...problemResponses(["unauthorized", "forbidden", "not_found"]) },
        },
        patch: {
          operationId: "updateKey",
          summary: "Rename a key or change its limits (admin keys); null removes a limit. Runs already admitted keep what they reserved.",
          parameters: [pathParam("id")],
          requestBody: { required: true, content: { "application/json": { schema: ref("UpdateKeyRequest") } } },
          responses: { "200": body("The key.", "ApiKey"), ...problemResponses(["validation_failed", "unauthorized", "forbidden", "not_found"]) },
        },
        delete: {
          operationId: "revokeKey",
          summary: "Revoke a key (admin keys): it is refused at once. The last active admin key cannot be revoked.",
          parameters: [pathParam("id")],
          responses: { "204": { description: "Revoked." }, ...problemResponses(["unauthorized", "forbidden", "not_found", "conflict"]) },
        },
      },
      "/api/v1/models": {
        get: {
          operationId: "listModels",
          summary: "Configured models and whether each can run (local models: loading, ready, or unavailable with why and the fix)",
          responses: { "200": body("The models.", "ModelList"), ...problemResponses(["unauthorized"]) },
        },
      },
      "/api/v1/models/{alias}/download": {
        post: {
          operationId: "retryModelDownload",
          summary:
            "Fetch an unavailable local model's file again (admin keys), in the background: the model reads `downloading`, then `loading` and `ready`, or `unavailable` with the new reason. Asked again while one runs, it joins that download.",
          parameters: [pathParam("alias")],
          responses: { "202": body("The model's state now (downloading).", "ModelStatus"), ...problemResponses(["unauthorized", "forbidden", "not_found", "conflict"]) },
        },
      },
      "/api/v1/inbox": {
        post: {
          operationId: "createInbox",
          summary: "Create a built-in callback receiver (at most `limits.inboxesPerKey` per key)",
          responses: { "201": body("The inbox: its id and the URL to send callbacks to.", "Inbox"), ...problemResponses(["unauthorized", "quota_exceeded", "storage_full"]) },
        },
      },
      "/api/v1/inbox/{id}": {
        get: {
          operationId: "getInbox",
          summary: "The inbox's received events (the key that created it), a page at a time",
          parameters: [
            pathParam("id"),
            { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 100, default: 100 } },
            { name: "cursor", in: "query", schema: { type: "string" }, description: "`nextCursor` of the previous page." },
          ],
          responses: {
            "200": body("Events, newest first, with whether each signature verified: at most `limit`, and at most `limits.inboxPageBytes` of them (always one).", "InboxEvents"),
            ...problemResponses(["validation_failed", "unauthorized", "not_found"]),
          },
        },
        post: {
          operationId: "deliverToInbox",
          summary: "Receive an event (no key: the unguessable id is the capability)",
          security: [],
          parameters: [pathParam("id")],
          responses: { "204": { description: "Stored (the inbox keeps its newest deliveries within its limits)." }, ...problemResponses(["not_found", "payload_too_large", "storage_full"]) },
        },
      },
      "/api/v1/runs/{id}/deliveries/redeliver": {
        post: {
          operationId: "redeliver",
          summary: "Send the run's callback event again (same webhook-id)",
          parameters: [pathParam("id")],
          responses: { "202": body("Queued for delivery.", "Redelivery"), ...problemResponses(["unauthorized", "run_not_found", "not_found"]) },
        },
      },
      "/api/v1/openapi.json": {
        get: {
          operationId: "getOpenApi",
          summary: "This document (OpenAPI 3.1)",
          security: [],
          responses: { "200": { description: "The document.", content: { "application/json": { schema: { type: "object" } } } } },
        },
      },
      "/api/v1/suites": {
        get: {
          operationId: "listSuites",
          summary: "The key's test suites (admin keys: all)",
          responses: { "200": body("Suites.", "SuiteList"), ...problemResponses(["unauthorized"]) },
        },
      },
      "/api/v1/suites/{slug}": {
        get: {
          operationId: "getSuite",
          summary: "A test suite's document",
          parameters: [pathParam("slug")],
          responses: { "200": body("The suite.", "Suite"), ...problemResponses(["unauthorized", "suite_not_found"]) },
        },
        put: {
          operationId: "putSuite",
          summary: "Create or replace a test suite (its key's, or any for admin keys); each change is a new version",
          parameters: [pathParam("slug")],
          requestBody: { required: true, content: { "application/json": { schema: ref("SuiteDocument") } } },
          responses: { "200": body("Replaced.", "Suite"), "201": body("Created.", "Suite"), ...problemResponses(["validation_failed", "unauthorized", "conflict", "quota_exceeded", "payload_too_large", "unsupported_media_type", "storage_full"]) },
        },
        delete: {
          operationId: "deleteSuite",
          summary: "Delete a test suite (its evaluations stay)",
          parameters: [pathParam("slug")],
          responses: { "204": { description: "Deleted." }, ...problemResponses(["unauthorized", "suite_not_found"]) },
        },
      },
      "/api/v1/suites/{slug}/evaluations": {
        post: {
          operationId: "startEvaluation",
          summary: "Run the suite's cases as one evaluation, in the background",
          description:
            "Every case run is an ordinary run of the key. Follow it with GET /api/v1/evaluations/{id}/events (SSE) or poll GET /api/v1/evaluations/{id}; with a callback, the signed `evaluation.completed` event is sent when it ends.",
          parameters: [pathParam("slug")],
          requestBody: { required: true, content: { "application/json": { schema: ref("CreateEvaluationRequest") } } },
          responses: {
            "202": body("Queued.", "QueuedEvaluation", { Location: { description: "The evaluation.", schema: { type: "string" } } }),
            ...problemResponses(["validation_failed", "unauthorized", "forbidden", "suite_not_found", "workflow_not_found", "evaluation_not_found", "unsupported_media_type", "evaluation_queue_full"]),
          },
        },
        get: {
          operationId: "listEvaluations",
          summary: "The suite's evaluations, newest first (`?status=`, `?limit=`)",
          parameters: [pathParam("slug")],
          responses: { "200": body("Evaluations.", "EvaluationList"), ...problemResponses(["validation_failed", "unauthorized"]) },
        },
      },
      "/api/v1/evaluations/{id}": {
        get: {
          operationId: "getEvaluation",
          summary: "An evaluation: totals, each case and field over its repeats, and the comparison with its baseline",
          parameters: [pathParam("id")],
          responses: { "200": body("The evaluation.", "Evaluation"), ...problemResponses(["unauthorized", "evaluation_not_found"]) },
        },
      },
      "/api/v1/evaluations/{id}/cancel": {
        post: {
          operationId: "cancelEvaluation",
          summary: "Cancel a queued or running evaluation (case runs in flight are cancelled)",
          parameters: [pathParam("id")],
          responses: { "200": body("Cancelled.", "EvaluationSummary"), ...problemResponses(["unauthorized", "evaluation_not_found", "conflict"]) },
        },
      },
      "/api/v1/evaluations/{id}/events": {
        get: {
          operationId: "followEvaluation",
          summary: "An evaluation's progress as server-sent events",
          description:
            "`event: result` for each case run as it is recorded (its `id:` resumes with Last-Event-ID), `event: progress` with the counts, and finally `event: end` with the EvaluationSummary.",
          parameters: [pathParam("id")],
          responses: { "200": { description: "The event stream.", content: { "text/event-stream": { schema: { type: "string" } } } }, ...problemResponses(["validation_failed", "unauthorized", "evaluation_not_found"]) },
        },
      },
      "/api/v1/contexts": {
        get: {
          operationId: "listContexts",
          summary: "Configured contexts",
          responses: {
            "200": body("Contexts.", "ContextList"),
            ...problemResponses(["unauthorized"]),
          },
        },
      },
    },
    components: {
      securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "Api-Key" } },
      schemas: components(),
    },
    "x-error-codes": Object.fromEntries(Object.entries(ERROR_CODES).map(([code, spec]) => [code, { status: spec.status, title: spec.title, retryable: spec.retryable }])),
  };
}
