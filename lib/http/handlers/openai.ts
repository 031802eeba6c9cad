import "server-only";
import { openAiError, openAiModelList } from "../../api/openai-shapes";
import { EDITOR, endpoint, VIEWER } from "../endpoint";
import { chatCompletions, modelList, OPENAI_DIALECT } from "../openai/chat-completions";
import { RUN_HEADERS } from "../doc-parts";

/**
 * The OpenAI-compatible endpoints, under /v1 as OpenAI's own: any OpenAI client (its base URL
 * `<genserve>/v1`, a genserve key as its API key) runs genserve workflows. They are entries of the
 * one route table like every other operation; their dialect gives them OpenAI's bearer key and
 * error shape, and the tag "OpenAI compatible" in the document.
 */
const OPENAI = { route: OPENAI_DIALECT, tag: "OpenAI compatible", security: "bearerKey" };
const ERRORS = { description: "An error in OpenAI's shape, with genserve's status (400 refused parameter, 401, 403, 404 model_not_found, 429, 5xx…).", body: openAiError };

export const endpoints = [
  endpoint({
    method: "POST",
    path: "/v1/chat/completions",
    operationId: "openAiChatCompletion",
    summary: "A workflow run as an OpenAI chat completion (`model`: a workflow reference)",
    description:
      "The last message (a user's) is the run's input, earlier user and assistant messages its history; system messages are refused (the workflow's instructions are the system prompt). `response_format` json_schema makes an object run against its schema (validated and retried as every object run), json_object against the workflow's default schema or any object; otherwise a text run. `stream: true` answers `chat.completion.chunk` events ending `data: [DONE]` (object runs stream as generated; a text run's text comes as one chunk). Parameters genserve does not honour (tools, n > 1, logprobs, temperature, max_tokens…) are refused naming the parameter.",
    auth: EDITOR("Only editor and admin keys may run workflows; viewer keys read runs."),
    request: { body: { type: "object", required: ["model", "messages"], description: "OpenAI's chat-completions request; see the description for what is honoured." }, required: true },
    responses: {
      "200": {
        description: "The completion (`id` is the run's id), or with `stream: true` its chunks.",
        headers: RUN_HEADERS,
        content: {
          "application/json": { schema: { $ref: "#/components/schemas/OpenAiChatCompletion" } },
          "text/event-stream": { schema: { type: "string", description: "`data: {chat.completion.chunk}` events, then `data: [DONE]`." } },
        },
      },
      default: ERRORS,
    },
    errors: [],
    dialect: OPENAI,
    handler: chatCompletions,
  }),
  endpoint({
    method: "GET",
    path: "/v1/models",
    operationId: "openAiListModels",
    summary: "The workflows (and their labels) this key may run, as OpenAI's model list",
    auth: VIEWER,
    responses: { "200": { description: "The models.", body: openAiModelList }, default: ERRORS },
    errors: [],
    dialect: OPENAI,
    handler: modelList,
  }),
];
