import { describe, expect, it } from "vitest";
import { GenserveError } from "../../errors";
import { chatRunOf, refusalOf } from "./chat-request";
import { toOpenAiError } from "./openai-errors";

const user = (content: unknown) => ({ role: "user", content });

describe("chatRunOf: an OpenAI chat request as a run request", () => {
  it("makes the last user message the input, earlier turns the history, image parts attachments", () => {
    const chat = chatRunOf({
      model: "extract-invoice@staging",
      messages: [user("first"), { role: "assistant", content: [{ type: "text", text: "answer" }] }, user([{ type: "text", text: "a" }, { type: "image_url", image_url: { url: "https://example.com/x.png" } }, { type: "text", text: "b" }])],
      user: "someone",
      store: true,
      n: 1,
      logprobs: false,
      temperature: null,
    });
    expect(chat).toMatchObject({ model: "extract-invoice@staging", format: "text", stream: false, includeUsage: false });
    expect(chat.request).toEqual({
      input: "a\nb",
      workflowSlug: "extract-invoice@staging",
      history: [
        { role: "user", content: "first" },
        { role: "assistant", content: "answer" },
      ],
      attachments: [{ file: "https://example.com/x.png" }],
    });
    expect(chat.paramOf("/input")).toBe("messages[2].content");
    expect(chat.paramOf("/workflowSlug")).toBe("model");
    expect(chat.paramOf("/schema/properties/a")).toBe("response_format.json_schema.schema.properties.a");
  });

  it("reads response_format: json_schema with or without a schema, json_object, text; and stream options", () => {
    const schema = { type: "object" };
    const base = { model: "w", messages: [user("x")] };
    expect(chatRunOf({ ...base, response_format: { type: "json_schema", json_schema: { name: "n", schema, strict: true } } })).toMatchObject({ format: "schema", request: { schema } });
    expect(chatRunOf({ ...base, response_format: { type: "json_schema", json_schema: { name: "n" } } }).request.schema).toBeUndefined();
    expect(chatRunOf({ ...base, response_format: { type: "json_object" } }).format).toBe("json_object");
    expect(chatRunOf({ ...base, response_format: { type: "text" } }).format).toBe("text");
    expect(chatRunOf({ ...base, stream: true, stream_options: { include_usage: true } })).toMatchObject({ stream: true, includeUsage: true });
    expect(chatRunOf({ ...base, store: true }).request.input).toBe("x");
  });

  it("takes a last user message of images alone as the input, its images the attachments", () => {
    const chat = chatRunOf({ model: "w", messages: [user([{ type: "image_url", image_url: { url: "https://e.com/a.png" } }])] });
    expect(chat.request).toMatchObject({ input: "", attachments: [{ file: "https://e.com/a.png" }] });
  });

  it("refuses what it cannot honour, naming the parameter as OpenAI's API does", () => {
    const base = { model: "w", messages: [user("x")] };
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ tools: [] }, "tools", /calls no tools/],
      [{ tool_choice: "auto" }, "tool_choice", /calls no tools/],
      [{ n: 3 }, "n", /must be 1/],
      [{ logprobs: true }, "logprobs", /log probabilities/],
      [{ top_logprobs: 2 }, "top_logprobs", /log probabilities/],
      [{ max_tokens: 10 }, "max_tokens", /workflow's setting/],
      [{ frobnicate: 1 }, "frobnicate", /Unrecognized/],
      [{ model: "bad ref!" }, "model", /workflow reference/],
      [{ messages: [] }, "messages", /non-empty/],
      [{ messages: [{ role: "developer", content: "x" }, user("y")] }, "messages[0].role", /instructions are the system prompt/],
      [{ messages: [user("y"), { role: "assistant", content: "z" }] }, "messages[1].role", /last message must be the user's/],
      [{ messages: [{ role: "assistant", content: null, tool_calls: [{ id: "1" }] }, user("y")] }, "messages[0].tool_calls", /no tools/],
      [{ messages: [{ role: "tool", content: "r", tool_call_id: "1" }, user("y")] }, "messages[0].role", /no tools/],
      [{ messages: [user([{ type: "image_url", image_url: { url: "https://e.com/a.png" } }]), { role: "assistant", content: "k" }, user("y")] }, "messages[0].content[0]", /last user message/],
      [{ messages: [user([{ type: "input_audio", input_audio: {} }])] }, "messages[0].content[0].type", /not supported/],
      [{ messages: [user("   ")] }, "messages[0].content", /must not be empty/],
      [{ messages: [user([])] }, "messages[0].content", /must not be empty/],
      [{ store: false }, "store", /every genserve run is stored/],
      [{ stream_options: { include_usage: true } }, "stream_options", /only allowed with stream: true/],
      [{ stream: false, stream_options: { include_usage: true } }, "stream_options", /only allowed with stream: true/],
      [{ response_format: { type: "yaml" } }, "response_format.type", /json_schema/],
      [{ response_format: { type: "json_schema", json_schema: { name: "n", schema: [] } } }, "response_format.json_schema.schema", /JSON Schema object/],
    ];
    for (const [extra, param, message] of cases) {
      const refusal = refusalOf({ ...base, ...extra });
      expect(refusal?.path, JSON.stringify(extra)).toBe(param);
      expect(refusal?.message).toMatch(message);
    }
  });
});

describe("toOpenAiError: genserve's errors in OpenAI's shape", () => {
  it("keeps genserve's status and code, with OpenAI's type, its own codes where it has them, and the parameter", () => {
    const refused = (() => {
      try {
        chatRunOf({ model: "w", messages: [user("x")], n: 2 });
      } catch (error) {
        return error;
      }
    })();
    expect(toOpenAiError(refused)).toEqual({
      status: 400,
      retryable: false,
      body: { error: { message: "n: must be 1: a workflow run makes one choice", type: "invalid_request_error", param: "n", code: "validation_failed" } },
    });
    expect(toOpenAiError(new GenserveError("unauthorized")).body.error).toMatchObject({ type: "authentication_error", code: "invalid_api_key", param: null });
    const missing = toOpenAiError(new GenserveError("workflow_not_found", { detail: 'No workflow "x" exists.', errors: [{ path: "/workflowSlug", message: "unknown workflow" }] }));
    expect(missing).toMatchObject({ status: 404, body: { error: { type: "not_found_error", code: "model_not_found", param: "model", message: 'No workflow "x" exists.' } } });
    const limited = toOpenAiError(new GenserveError("rate_limited"));
    expect(limited).toMatchObject({ status: 429, retryable: true, body: { error: { type: "rate_limit_error", code: "rate_limited" } } });
    const failed = toOpenAiError(new GenserveError("output_invalid", { runId: "run_1", detail: "Invalid." }));
    expect(failed).toMatchObject({ status: 502, body: { error: { type: "server_error", message: "Invalid. (run run_1)" } } });
    // An unknown error is internal, and says nothing of itself.
    expect(toOpenAiError(new Error("secret detail")).body.error).toMatchObject({ type: "server_error", code: "internal", message: "An internal error occurred." });
  });

  it("lets a client retry by itself only a refusal before any run exists, never a run that ran (it was charged) nor an unexpected error", () => {
    for (const code of ["rate_limited", "run_queue_full", "storage_unavailable", "model_busy"] as const) expect(toOpenAiError(new GenserveError(code)).retryable, code).toBe(true);
    for (const code of ["output_invalid", "model_error", "model_timeout", "interrupted"] as const) {
      expect(toOpenAiError(new GenserveError(code, { runId: "run_1" })).retryable, code).toBe(false);
    }
    expect(toOpenAiError(new Error("boom")).retryable).toBe(false);
    expect(toOpenAiError(new GenserveError("internal")).retryable).toBe(false);
  });

  it("answers history that does not fit the window as OpenAI's context_length_exceeded (400), a too large body as 413", () => {
    const history = new GenserveError("payload_too_large", { detail: "The history does not fit.", errors: [{ path: "/history", message: "too long" }] });
    expect(toOpenAiError(history)).toEqual({
      status: 400,
      retryable: false,
      body: { error: { message: "The history does not fit.", type: "invalid_request_error", param: "messages", code: "context_length_exceeded" } },
    });
    expect(toOpenAiError(new GenserveError("payload_too_large", { detail: "Too big." }))).toMatchObject({ status: 413, body: { error: { code: "payload_too_large" } } });
  });
});
