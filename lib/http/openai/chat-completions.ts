import "server-only";
import { openAiChatCompletion, openAiModelList } from "../../api/openai-shapes";
import { GenserveError, toProblem, validationError } from "../../errors";
import type { Principal } from "../../keys/api-keys";
import { readJsonBody } from "../body";
import { reply } from "../problem";
import { quotaHeaders, type RouteContext, type RouteDialect } from "../route";
import { eventsResponse, streamResponse } from "../stream-format";
import type { StreamEvent } from "../../runs/stream-hub";
import type { MeterState } from "../../store/store-types";
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
    const workflow = await runtime.catalog.forProject(caller.projectId).resolve(chat.model, "/workflowSlug");
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
      encoder: chatChunkEncoder(head(runId), { includeUsage: chat.includeUsage, paramOf: chat.paramOf }),
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
  if (!chat.stream) {
    const result = await runtime.runs.generateText(caller, run, origin);
    return reply(openAiChatCompletion, completionOf(head(result.runId), result.text, result.metadata), { headers: { "X-Run-ID": result.runId, ...quotaHeaders(result.quota) } });
  }
  return streamedText(runtime, caller, chat, origin, head);
}

/**
 * A streamed text run. Text runs are not streamed by genserve's pipeline: the finished text comes
 * as one chunk, in the same format, so that a streaming client works unchanged (README, "Any OpenAI
 * client"). The response starts once the run is admitted — a refusal before that is an ordinary
 * error response with its status — and then keeps the connection alive with comments while the
 * model works. A client that goes away cancels the run, as OpenAI stops generating for a closed
 * stream (the native routes' `cancelOnDisconnect`).
 */
async function streamedText(runtime: Ctx["runtime"], caller: Principal, chat: ChatRun, origin: { traceparent: string | null }, head: (id: string) => CompletionHead): Promise<Response> {
  const cancel = new AbortController();
  let started!: (value: { runId: string; quota: MeterState[] }) => void;
  const admitted = new Promise<{ runId: string; quota: MeterState[] }>((resolve) => (started = resolve));
  const result = runtime.runs.generateText(caller, chat.request, { ...origin, signal: cancel.signal, onStarted: (runId, quota) => started({ runId, quota }) });
  const { runId, quota } = await Promise.race([admitted, result]);
  const events = result.then(
    (r): StreamEvent[] => [
      { seq: 1, kind: "item", text: r.text },
      { seq: 2, kind: "done", payload: { runId, object: r.text, metadata: r.metadata } },
    ],
    (error: unknown): StreamEvent[] => [{ seq: 1, kind: "error", problem: toProblem(error, runtime.logger) }],
  );
  return eventsResponse(
    runId,
    async function* whenDone(signal) {
      const batch = await events;
      if (!signal.aborted) yield batch;
    },
    {
      accept: null,
      encoder: chatChunkEncoder(head(runId), { includeUsage: chat.includeUsage, paramOf: chat.paramOf }),
      keepAliveMs: runtime.config.limits.streamKeepAliveMs,
      onDisconnect: () => cancel.abort(new GenserveError("cancelled", { detail: "The client closed the stream: the run was cancelled." })),
      headers: quotaHeaders(quota),
    },
  );
}

/** GET /v1/models: the workflows this key may run, and each label that points at a version. */
export async function modelList({ runtime, principal }: Ctx): Promise<Response> {
  const caller = await principal();
  const allowed = caller.limits.workflows;
  // The key's project's workflows only: another project's are not this key's to see.
  const catalog = runtime.catalog.forProject(caller.projectId);
  const workflows = (await catalog.workflows()).filter((w) => allowed === null || allowed.includes(w.slug));
  const data = [];
  for (const workflow of workflows) {
    const entry = { object: "model" as const, created: 0, owned_by: "genserve" as const, ...(workflow.description && { description: workflow.description }) };
    data.push({ id: workflow.slug, ...entry });
    const labels = await catalog.labels(workflow.slug);
    for (const label of labels) if (label.version !== null && label.outcome === "moved") data.push({ id: `${workflow.slug}@${label.label}`, ...entry });
  }
  return reply(openAiModelList, { object: "list", data });
}
