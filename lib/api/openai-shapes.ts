/**
 * Response shapes of the OpenAI-compatible endpoints (`/v1/chat/completions`, `/v1/models`): the
 * subset of OpenAI's own that genserve answers with, plus `genserve` (the run's metadata). They
 * document the endpoints in the OpenAPI document (tag "OpenAI compatible"); the requests are read
 * field by field (lib/http/openai/chat-request.ts), because an unsupported field must be refused by
 * its OpenAI name. Browser-safe.
 */
import { z } from "zod";
import { named } from "./shape-registry";

const runMetadata = z
  .object({
    runId: z.string(),
    cost: z.string(),
    model: z.object({ name: z.string(), tag: z.string() }),
    durationInMs: z.number(),
    inputTokens: z.number(),
    outputTokens: z.number(),
    warnings: z.array(z.string()).optional(),
    finishReason: z.string().optional(),
  })
  .describe("genserve's metadata of the run (not part of OpenAI's shape; clients ignore it).");

const usage = z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() });

export const openAiChatCompletion = z
  .object({
    id: z.string().describe("The run's id (run_…): GET /api/v1/runs/{id} reads it."),
    object: z.literal("chat.completion"),
    created: z.number().int(),
    model: z.string().describe("The workflow reference the request named."),
    choices: z.array(
      z.object({
        index: z.literal(0),
        message: z.object({ role: z.literal("assistant"), content: z.string(), refusal: z.null() }),
        finish_reason: z.enum(["stop", "length"]).describe("`length` when the model reached its output limit (the text is cut), else `stop`."),
        logprobs: z.null(),
      }),
    ),
    usage,
    system_fingerprint: z.null(),
    genserve: runMetadata,
  })
  .apply(named({ id: "OpenAiChatCompletion", description: "A chat completion as OpenAI's API answers one; `message.content` is the JSON text for response_format json_schema and json_object." }));

export const openAiModelList = z
  .object({
    object: z.literal("list"),
    data: z.array(
      z.object({
        id: z.string().describe("A workflow reference: `slug`, or `slug@label` for each label that points at a version."),
        object: z.literal("model"),
        created: z.number().int().describe("Unix seconds the version was saved; 0 for workflows of the configuration file."),
        owned_by: z.literal("genserve"),
        description: z.string().optional(),
      }),
    ),
  })
  .apply(named({ id: "OpenAiModelList", description: "The workflows (and their labels) this key may run, as OpenAI's model list." }));

export const openAiError = z
  .object({
    error: z.object({
      message: z.string(),
      type: z.string().describe("invalid_request_error, authentication_error, permission_error, not_found_error, insufficient_quota, rate_limit_error or server_error."),
      param: z.string().nullable().describe("The request parameter at fault, in OpenAI's naming (`model`, `messages[2].content`, `tools`)."),
      code: z.string().nullable().describe("genserve's stable error code (`invalid_api_key` and `model_not_found` where OpenAI has its own)."),
    }),
  })
  .apply(named({ id: "OpenAiError", description: "An error as OpenAI's API answers one; `X-Should-Retry` says whether retrying may succeed." }));

export type OpenAiChatCompletion = z.input<typeof openAiChatCompletion>;
export type OpenAiErrorBody = z.input<typeof openAiError>;
