/**
 * The API operations the client calls, and their request and response types, taken from the
 * server's own zod shapes (lib/api) — type imports only, so no schema library reaches a bundle.
 * `operations.test.ts` checks this table against the OpenAPI document generated from the server's
 * route table: a renamed path, a changed method or a different shape fails it. Browser-safe.
 */
import type { z } from "zod";
import type { generateObjectRequest, generateTextRequest, streamObjectRequest } from "../api/requests";
import type { generateObjectResponse, generateTextResponse, queuedRunResponse, runCancellationSchema, runDetailSchema } from "../api/responses";
import type { RunMetadata } from "../domain/run-vocabulary";

export type GenerateObjectBody = z.input<typeof generateObjectRequest>;
export type GenerateTextBody = z.input<typeof generateTextRequest>;
export type StreamObjectBody = z.input<typeof streamObjectRequest>;
export type GenerateObjectAnswer = z.output<typeof generateObjectResponse>;
export type GenerateTextAnswer = z.output<typeof generateTextResponse>;
export type QueuedRun = z.output<typeof queuedRunResponse>;
/** A run as GET /api/v1/runs/{id} shows it. */
export type Run = z.output<typeof runDetailSchema>;
export type RunCancellation = z.output<typeof runCancellationSchema>;
export type { RunMetadata };

/** Method, path, request shape and answers (shape names of the OpenAPI document; "stream" for an event stream) of each operation. */
export const OPERATIONS = {
  generateObject: { method: "POST", path: "/api/v1/generate/object", request: "GenerateObjectRequest", responses: { "200": "GenerateObjectResponse", "202": "QueuedRun" } },
  generateText: { method: "POST", path: "/api/v1/generate/text", request: "GenerateTextRequest", responses: { "200": "GenerateTextResponse", "202": "QueuedRun" } },
  streamObject: { method: "POST", path: "/api/v1/stream/object", request: "StreamObjectRequest", responses: { "200": "stream" } },
  resumeStream: { method: "GET", path: "/api/v1/runs/{id}/stream", request: null, responses: { "200": "stream" } },
  getRun: { method: "GET", path: "/api/v1/runs/{id}", request: null, responses: { "200": "RunDetail" } },
  cancelRun: { method: "POST", path: "/api/v1/runs/{id}/cancel", request: null, responses: { "200": "RunCancellation", "202": "RunCancellation" } },
} as const;

export type OperationId = keyof typeof OPERATIONS;

/** An operation's path with its `{id}` filled in. */
export const pathOf = (operation: OperationId, id?: string): string => OPERATIONS[operation].path.replace("{id}", encodeURIComponent(id ?? ""));
