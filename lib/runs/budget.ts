import "server-only";
import type { ContextConfig, ModelConfig, WorkflowConfig } from "../config/config-types";
import type { Limits } from "../config/schema";
import { estimateTokens } from "../domain/tokens";
import { GenserveError } from "../errors";
import { messageText, type ChatMessage } from "../models/model-client";
import type { ThreadMessage } from "../store/store-types";
import { chunkText, selectChunks } from "./chunking";
import type { Prompt } from "./prompt";

/**
 * The token budget of a run, where the model's own tokenizer is not at hand (remote models): one
 * estimate (lib/domain/tokens.ts, shared with the playground) for fitting contexts and thread
 * history into the model's window and for refusing a prompt that cannot fit. Local models count
 * exactly instead (ModelClient.preflight).
 */

/** Assumed when a model's configuration gives no contextWindow. */
export const DEFAULT_CONTEXT_WINDOW = 8192;

/** The prompt's estimated size: system text and every message, images left out. */
export function estimatePromptTokens(prompt: Prompt): number {
  return estimateTokens(prompt.system.length + prompt.messages.reduce((n, m) => n + messageText(m.content).length, 0));
}

/**
 * A prompt that cannot fit the model's configured context window (with room for the output) is
 * refused before the model is called: 413 with the numbers, in estimated tokens.
 */
export function checkWindow(prompt: Prompt, model: ModelConfig, workflow: WorkflowConfig): void {
  if (model.contextWindow === undefined) return;
  const estimate = estimatePromptTokens(prompt);
  const room = model.contextWindow - (workflow.maxOutputTokens ?? 0);
  if (estimate > room) {
    throw new GenserveError("payload_too_large", {
      detail: `The prompt (instructions, contexts, attachments and input) is about ${estimate} tokens; model "${model.alias}" has a ${model.contextWindow}-token window${workflow.maxOutputTokens ? `, ${workflow.maxOutputTokens} of them kept for the output` : ""}.`,
    });
  }
}

/**
 * Contexts larger than `limits.contextShare` of the model's window keep only their chunks most
 * relevant to the input (BM25); the chosen chunk ids are recorded on the run.
 */
export function fitContexts(
  contexts: readonly ContextConfig[],
  model: ModelConfig,
  input: string,
  limits: Pick<Limits, "contextShare" | "contextChunkChars">,
): { contexts: ContextConfig[]; chunkIds: string[] } {
  const window = model.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
  const budgetChars = Math.floor(window * limits.contextShare * 4);
  const chunkIds: string[] = [];
  const fitted = contexts.map((context) => {
    if (context.content.length <= budgetChars) return context;
    const chosen = selectChunks(chunkText(context.slug, context.content, Math.min(limits.contextChunkChars, budgetChars)), input, budgetChars);
    chunkIds.push(...chosen.map((c) => c.id));
    return { ...context, content: chosen.map((c) => c.text).join("\n\n[…]\n\n") };
  });
  return { contexts: fitted, chunkIds };
}

/**
 * The thread's history that fits the model's context window next to this run's prompt; the oldest
 * exchanges are dropped first, whole user/assistant pairs at a time.
 */
export function fitHistory(messages: readonly ThreadMessage[], prompt: Prompt, model: ModelConfig, workflow: WorkflowConfig): ChatMessage[] {
  const window = model.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
  let budget = window - (workflow.maxOutputTokens ?? 1024) - estimatePromptTokens(prompt);
  const kept: ChatMessage[] = [];
  for (let i = messages.length - 1; i >= 1; i -= 2) {
    const question = messages[i - 1]!;
    const answer = messages[i]!;
    const cost = estimateTokens(question.content) + estimateTokens(answer.content);
    if (cost > budget) break;
    budget -= cost;
    kept.unshift({ role: question.role, content: question.content }, { role: answer.role, content: answer.content });
  }
  return kept;
}

/**
 * A request's own history (`history`, OpenAI's earlier messages), kept whole: it is what the caller
 * sent and what the run records, so a turn is never dropped silently to fit the window. When it
 * does not fit next to the prompt (the same budget as a thread's history), the run is refused at
 * `/history` with the numbers.
 */
export function wholeHistory(messages: readonly ChatMessage[], prompt: Prompt, model: ModelConfig, workflow: WorkflowConfig): ChatMessage[] {
  const window = model.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
  const output = workflow.maxOutputTokens ?? 1024;
  const rest = estimatePromptTokens(prompt);
  const cost = messages.reduce((n, m) => n + estimateTokens(messageText(m.content)), 0);
  if (cost > window - output - rest) {
    throw new GenserveError("payload_too_large", {
      detail: `The history (${messages.length} messages, about ${cost} tokens) does not fit model "${model.alias}"'s ${window}-token window next to the prompt (about ${rest} tokens) and ${output} tokens kept for the output; send fewer or shorter earlier messages.`,
      errors: [{ path: "/history", message: `about ${cost} tokens; at most about ${Math.max(0, window - output - rest)} fit` }],
    });
  }
  return messages.map((m) => ({ role: m.role, content: m.content }));
}
