import "server-only";
import type { OpenAiChatCompletion } from "../../api/openai-shapes";
import type { RunMetadata } from "../../domain/run-vocabulary";
import { GenserveError, type ProblemBody } from "../../errors";
import type { StreamEncoder } from "../stream-format";
import { toOpenAiError, type ParamOf } from "./openai-errors";

/**
 * A run's answer in OpenAI's chat-completion shapes: the whole completion, and a run's stream as
 * `chat.completion.chunk` events (Server-Sent Events, `data:` lines only, ending `data: [DONE]`).
 */

export interface CompletionHead {
  /** The run's id. */
  id: string;
  /** The workflow reference the request named. */
  model: string;
  /** Unix seconds. */
  created: number;
}

/** OpenAI's finish reason of a run: `length` when the model reached its output limit, else `stop`. */
const finishOf = (m: RunMetadata): "stop" | "length" => (m.finishReason === "length" ? "length" : "stop");

const usageOf = (m: RunMetadata) => ({ prompt_tokens: m.inputTokens, completion_tokens: m.outputTokens, total_tokens: m.inputTokens + m.outputTokens });

/** The finished run as a chat completion; `content` is the text, or the object's JSON text. */
export function completionOf(head: CompletionHead, content: string, metadata: RunMetadata): OpenAiChatCompletion {
  return {
    id: head.id,
    object: "chat.completion",
    created: head.created,
    model: head.model,
    choices: [{ index: 0, message: { role: "assistant", content, refusal: null }, finish_reason: finishOf(metadata), logprobs: null }],
    usage: usageOf(metadata),
    system_fingerprint: null,
    genserve: metadata,
  };
}

const sse = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;

/**
 * A run's stream events as chat-completion chunks: the first text piece after a chunk giving the
 * role, each text piece a `delta.content`, the end a chunk with `finish_reason: "stop"` (and
 * genserve's metadata; `length` instead when the model reached its output limit), then with `includeUsage` a chunk of `usage` and no choices, then `[DONE]`.
 * An error ends the stream with `data: {error}` in OpenAI's shape, as OpenAI's own streams do.
 *
 * A `restart` (the model's output failed validation and genserve retries) cannot be told in
 * OpenAI's format, whose clients only append: what was sent cannot be taken back. The stream ends
 * there with the error `output_restarted`, naming the run, which goes on and is recorded; its
 * result is at GET /api/v1/runs/{id}. Stateful: one encoder per response.
 */
export function chatChunkEncoder(head: CompletionHead, options: { includeUsage: boolean; paramOf?: ParamOf }): StreamEncoder {
  let started = false;
  let ended = false;
  const chunk = (delta: Record<string, unknown>, finish: "stop" | "length" | null, extra: Record<string, unknown> = {}) =>
    sse({
      id: head.id,
      object: "chat.completion.chunk",
      created: head.created,
      model: head.model,
      system_fingerprint: null,
      choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
      ...(options.includeUsage && { usage: null }),
      ...extra,
    });
  const start = () => {
    if (started) return "";
    started = true;
    return chunk({ role: "assistant", content: "" }, null);
  };
  return {
    contentType: "text/event-stream; charset=utf-8",
    encode(event) {
      if (ended) return "";
      switch (event.kind) {
        case "item":
          return start() + chunk({ content: event.text }, null);
        case "field":
          return ""; // never asked for here (OpenAI's chunks carry only text)
        case "restart":
          ended = true;
          return sse({
            error: {
              message: `The model's output failed validation after part of it was streamed, and genserve began attempt ${event.attempt}; an OpenAI stream cannot take back what it sent, so it ends here. The run goes on: read its result at /api/v1/runs/${head.id}.`,
              type: "server_error",
              param: null,
              code: "output_restarted",
            },
          });
        case "done": {
          ended = true;
          const metadata = event.payload.metadata;
          let out = start() + chunk({}, finishOf(metadata), { genserve: metadata });
          if (options.includeUsage) out += sse({ id: head.id, object: "chat.completion.chunk", created: head.created, model: head.model, system_fingerprint: null, choices: [], usage: usageOf(metadata) });
          return `${out}data: [DONE]\n\n`;
        }
        case "error":
          ended = true;
          return sse(toOpenAiError(problemError(event.problem), undefined, options.paramOf).body);
      }
    },
    ping: () => ": ping\n\n",
    ended: () => ended,
  };
}

/** A problem from the stream as the error it was (its code, detail, fields and run). */
function problemError(problem: ProblemBody): GenserveError {
  const code = problem.code as ConstructorParameters<typeof GenserveError>[0];
  return new GenserveError(code, { detail: problem.detail, errors: problem.errors, runId: problem.runId });
}
