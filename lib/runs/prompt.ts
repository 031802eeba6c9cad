import "server-only";
import type { ContextConfig, WorkflowConfig } from "../config/config-types";
import type { ChatMessage } from "../models/model-client";
import type { ImageAttachment, PromptAttachment } from "../attachments/resolve";

export interface PromptParts {
  workflow: Pick<WorkflowConfig, "instructions">;
  /** Workflow contexts first, then the request's, without duplicates. */
  contexts: readonly ContextConfig[];
  attachments: readonly PromptAttachment[];
  /** Images for vision models, sent with the input. */
  images?: readonly ImageAttachment[];
  input: string;
  /** Earlier exchanges of the thread, oldest first. */
  history?: readonly ChatMessage[];
  /** For object operations: the schema, and whether it must be spelled out in the prompt. */
  output?: { schema: Record<string, unknown>; inPrompt: boolean };
}

export interface Prompt {
  system: string;
  messages: ChatMessage[];
}

/**
 * Builds the messages of a run in a fixed order: workflow instructions, contexts, attachments, the
 * output contract, then the input as the user's message. Material is fenced in tags naming its
 * source so the model can tell instructions from data.
 */
export function buildPrompt(parts: PromptParts): Prompt {
  const sections: string[] = [];
  if (parts.workflow.instructions.trim()) sections.push(parts.workflow.instructions.trim());
  for (const context of parts.contexts) {
    sections.push(`<context slug="${context.slug}" title="${escapeAttr(context.title)}">\n${context.content.trim()}\n</context>`);
  }
  for (const attachment of parts.attachments) {
    sections.push(`<attachment index="${attachment.index}" type="${attachment.mimeType}">\n${attachment.text}\n</attachment>`);
  }
  if (parts.output) {
    sections.push(
      parts.output.inPrompt
        ? `Answer with a single JSON value that validates against this JSON Schema, and nothing else (no prose, no code fences):\n${JSON.stringify(parts.output.schema)}`
        : "Answer with a single JSON value that follows the given schema, and nothing else.",
    );
  }
  const input: ChatMessage["content"] =
    parts.images && parts.images.length > 0
      ? [{ type: "text", text: parts.input }, ...parts.images.map((i) => ({ type: "image" as const, image: i.data, mediaType: i.mimeType }))]
      : parts.input;
  return { system: sections.join("\n\n"), messages: [...(parts.history ?? []), { role: "user", content: input }] };
}

/** The follow-up turn after an output that failed validation, listing what was wrong. */
export function retryFeedback(previous: string, problems: readonly { path: string; message: string }[]): ChatMessage[] {
  const list = problems.slice(0, 20).map((p) => `- ${p.path}: ${p.message}`).join("\n");
  return [
    { role: "assistant", content: previous },
    {
      role: "user",
      content: `That answer does not validate against the JSON Schema:\n${list}\nReply again with only the corrected JSON value.`,
    },
  ];
}

function escapeAttr(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}
