import "server-only";
import { openAiChatCompletion, openAiModelList } from "../../api/openai-shapes";
import { GenserveError, validationError } from "../../errors";
import type { Principal } from "../../keys/api-keys";
import { readJsonBody } from "../body";
import { reply } from "../problem";
import { quotaHeaders, type RouteContext, type RouteDialect } from "../route";
import { streamHeaders, streamResponse } from "../stream-format";
import { chatChunkEncoder, completionOf, type CompletionHead } from "./chat-chunks";
import { chatRunOf, type ChatRun } from "./chat-request";
import { openAiErrorResponse } from "./openai-errors";

/**
 * The OpenAI-compatible endpoints' handlers. A chat completion is an ordinary genserve run through
 * the run service — `generate.object`, `stream.object` or `generate.text`, stored, metered, in the
 * runs table, its id the completion's `id` and `X-Run-ID` — only read from and answered in
 * OpenAI's shapes.
 */

/** OpenAI's conventions: the key as `Authorization: Bearer <key>`, errors as `{error: {…}}`. */
export const OPENAI_DIALECT: RouteDialect = {
  credential(request) {
    const header = request.headers.get("authorization");
    const bearer = header === null ? null : /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    if (!bearer) throw new GenserveError("unauthorized", { detail: "Send your genserve API key as Authorization: Bearer <key>." });
    return bearer;
  },
  errorResponse: (error, log) => openAiErrorResponse(error, log),
};

type Ctx = RouteContext<Record<string, string>>;

/** POST /v1/chat/completions. */
export async function chatCompletions(ctx: Ctx): Promise<Response> {
  const { request, runtime } = ctx;
  const caller = await ctx.principal();
  const chat = chatRunOf(await readJsonBody(request, runtime.config.limits.bodyBytes, runtime.config.limits.jsonDepth));
  try {
    return await answer(ctx, caller, chat);
  } catch (error) {
    // Errors of the run's request are named by this request's parameters (`model`, `messages[2].content`).
    return openAiErrorResponse(error, runtime.logger, chat.paramOf);
  }
}

async function answer({ request, runtime }: Ctx, caller: Principal, chat: ChatRun): Promise<Response> {
  const run = chat.request;
  if (chat.format === "json_object") {
    // The workflow's default schema when it has one; else any JSON object, as OpenAI's JSON mode.
    const workflow = await runtime.catalog.resolve(chat.model, "/workflowSlug");
    if (!workflow.schema) run.schema = { type: "object" };
  }
  if (run.schema) {
    // Screened as the native operations' route screens a caller's schema before the run.
    const problems = await runtime.schemas.problems(run.schema);
    if (problems.length > 0) throw validationError(problems);
  }
  const origin = { traceparent: request.headers.get("traceparent") };
  const head = (id: string): CompletionHead => ({ id, model: chat.model, created: Math.floor(Date.now() / 1000) });

  if (chat.format !== "text" && chat.stream) {
    const { runId, quota } = await runtime.runs.streamObject(caller, run, origin);
    return streamResponse(runtime.hub, runId, {
      accept: null,
      encoder: chatChunkEncoder(head(runId), { includeUsage: chat.includeUsage }),
      keepAliveMs: runtime.config.limits.streamKeepAliveMs,
      onDisconnect: () => runtime.runs.clientGone(runId, false),
      headers: quotaHeaders(quota),
    });
  }
  if (chat.format !== "text") {
    const result = await runtime.runs.generateObject(caller, run, origin);
    const body = completionOf(head(result.runId), JSON.stringify(result.object), result.metadata);
    return reply(openAiChatCompletion, body, { headers: { "X-Run-ID": result.runId, ...quotaHeaders(result.quota) } });
  }
  const result = await runtime.runs.generateText(caller, run, origin);
  if (!chat.stream) {
    return reply(openAiChatCompletion, completionOf(head(result.runId), result.text, result.metadata), { headers: { "X-Run-ID": result.runId, ...quotaHeaders(result.quota) } });
  }
  // Text runs are not streamed by genserve's pipeline: the finished text is sent as one chunk, in
  // the same format, so that a streaming client works unchanged (README, "Any OpenAI client").
  const encoder = chatChunkEncoder(head(result.runId), { includeUsage: chat.includeUsage });
  const text =
    encoder.encode({ seq: 1, kind: "item", text: result.text }) + encoder.encode({ seq: 2, kind: "done", payload: { runId: result.runId, object: result.text, metadata: result.metadata } });
  return new Response(text, { headers: { ...quotaHeaders(result.quota), ...streamHeaders(encoder.contentType, result.runId) } });
}

/** GET /v1/models: the workflows this key may run, and each label that points at a version. */
export async function modelList({ runtime, principal }: Ctx): Promise<Response> {
  const allowed = (await principal()).limits.workflows;
  const workflows = (await runtime.catalog.workflows()).filter((w) => allowed === null || allowed.includes(w.slug));
  const data = [];
  for (const workflow of workflows) {
    const entry = { object: "model" as const, created: 0, owned_by: "genserve" as const, ...(workflow.description && { description: workflow.description }) };
    data.push({ id: workflow.slug, ...entry });
    const labels = await runtime.catalog.labels(workflow.slug);
    for (const label of labels) if (label.version !== null && label.outcome === "moved") data.push({ id: `${workflow.slug}@${label.label}`, ...entry });
  }
  return reply(openAiModelList, { object: "list", data });
}
