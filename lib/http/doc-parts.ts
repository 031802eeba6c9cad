import "server-only";
import type { ErrorCode } from "../errors";

// Pieces of the OpenAPI document that several endpoints of the table share.

/** What a run operation may end with. */
export const RUN_ERRORS: ErrorCode[] = [
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
];

/** Errors only an object operation can end with. */
export const OBJECT_ONLY = new Set<string>(["output_invalid", "schema_timeout"]);

/** The run operations' one query parameter: a caller that goes away stops the run. */
export const CANCEL_ON_DISCONNECT = {
  name: "cancelOnDisconnect",
  in: "query",
  required: false,
  description:
    "`true`: if the client disconnects before the response is complete (an aborted request), the run stops at once — the model call is aborted and the run is recorded failed with `cancelled`, billed for what it used. Otherwise the run completes and is recorded. Not for `Prefer: respond-async`.",
  schema: { type: "string", enum: ["true", "false"] },
};

/** The headers of a run's answer. */
export const RUN_HEADERS = {
  "X-Run-ID": { description: "The run's id (same as metadata.runId).", schema: { type: "string" } },
  "RateLimit-Policy": {
    description: 'The key\'s rate and concurrency limits (IETF draft-ietf-httpapi-ratelimit-headers), e.g. `"rpm";q=60;w=60, "tpm";q=100000;w=60;qu="tokens"`. Absent when the key has none.',
    schema: { type: "string" },
  },
  RateLimit: { description: 'What remains of each policy and the seconds until its window resets, e.g. `"rpm";r=59;t=42`.', schema: { type: "string" } },
};

/** A stream of StreamItem values (and StreamField ones, when asked), as SSE or NDJSON. */
const STREAM_EVENT = { $ref: "#/components/schemas/StreamData" };
export const STREAM_CONTENT = { "text/event-stream": { schema: STREAM_EVENT }, "application/x-ndjson": { schema: STREAM_EVENT } };

/** stream/object's opt-in to field events. */
export const FIELDS = {
  name: "fields",
  in: "query",
  description:
    "`true`: the stream also tells when each value of the object is complete — `event: field` (NDJSON `{\"type\":\"field\"}`) with its JSON Pointer, value and `valid` — leaves as they close, objects and arrays when closed, each pointer once per attempt; a `restart` voids the fields of the attempt before it. A resumed stream replays them.",
  schema: { type: "string", enum: ["true", "false"] },
};

/** The Location header of an answer that starts an evaluation. */
export const EVALUATION_LOCATION = { Location: { description: "The evaluation.", schema: { type: "string" } } };

/** A `limit` and `cursor` pair of query parameters. */
export const pageParams = (max: number, fallback: number) => [
  { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: max, default: fallback } },
  { name: "cursor", in: "query", schema: { type: "string" }, description: "`nextCursor` of the previous page." },
];
