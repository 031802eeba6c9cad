import "server-only";
import { modelListSchema, modelStatusSchema } from "../../api/responses";
import { ADMIN, endpoint, VIEWER } from "../endpoint";
import { reply } from "../problem";

export const endpoints = [
  endpoint({
    method: "GET",
    path: "/api/v1/models",
    operationId: "listModels",
    summary: "Configured models and whether each can run (local models: loading, ready, or unavailable with why and the fix)",
    auth: VIEWER,
    responses: { "200": { description: "The models.", body: modelListSchema } },
    errors: ["unauthorized"],
    /** Configured models and whether each can run: local models say loading, ready, or what is wrong and how to fix it. */
    handler: async ({ runtime }) => reply(modelListSchema, { models: runtime.models.statuses() }),
  }),
  endpoint({
    method: "POST",
    path: "/api/v1/models/{alias}/download",
    operationId: "retryModelDownload",
    summary:
      "Fetch an unavailable local model's file again (admin keys), in the background: the model reads `downloading`, then `loading` and `ready`, or `unavailable` with the new reason. Asked again while one runs, it joins that download.",
    auth: ADMIN("Only admin keys may retry a model's download."),
    responses: { "202": { description: "The model's state now (downloading).", body: modelStatusSchema } },
    errors: ["unauthorized", "forbidden", "not_found", "conflict"],
    /** One download at a time. */
    handler: async ({ runtime, params }) => reply(modelStatusSchema, runtime.models.retryDownload(params.alias), { status: 202 }),
  }),
];
