import { describe, expect, it } from "vitest";
import type { RunMetadata } from "../../domain/run-vocabulary";
import { chatChunkEncoder, completionOf } from "./chat-chunks";
import { paramMapper } from "./openai-errors";

const head = { id: "run_1", model: "invoice@2", created: 1_800_000_000 };
const metadata: RunMetadata = { runId: "run_1", cost: "0.01", model: { name: "m", tag: "fast" }, durationInMs: 5, inputTokens: 7, outputTokens: 3 };

/** The `data:` payloads of an encoded stream, parsed (and `[DONE]` as is). */
const events = (text: string) =>
  text
    .split("\n\n")
    .filter(Boolean)
    .map((e) => {
      expect(e.startsWith("data: ")).toBe(true);
      const data = e.slice("data: ".length);
      return data === "[DONE]" ? data : (JSON.parse(data) as Record<string, any>);
    });

describe("chatChunkEncoder: a run's stream as chat.completion.chunk events", () => {
  it("gives the role first, each text piece as delta.content, then stop, usage when asked, and [DONE]", () => {
    const encoder = chatChunkEncoder(head, { includeUsage: true });
    const text = [
      encoder.encode({ seq: 1, kind: "item", text: '{"a":' }),
      encoder.encode({ seq: 2, kind: "item", text: "1}" }),
      encoder.encode({ seq: 3, kind: "done", payload: { runId: "run_1", object: { a: 1 }, metadata } }),
    ].join("");
    const out = events(text);
    expect(out.map((e) => (e === "[DONE]" ? e : [e.choices[0]?.delta ?? null, e.choices[0]?.finish_reason ?? null]))).toEqual([
      [{ role: "assistant", content: "" }, null],
      [{ content: '{"a":' }, null],
      [{ content: "1}" }, null],
      [{}, "stop"],
      [null, null],
      "[DONE]",
    ]);
    const first = out[0] as Record<string, unknown>;
    expect(first).toMatchObject({ id: "run_1", object: "chat.completion.chunk", created: 1_800_000_000, model: "invoice@2", usage: null });
    expect(out[3]).toMatchObject({ genserve: metadata });
    expect(out[4]).toMatchObject({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } });
    expect(encoder.ping()).toBe(": ping\n\n");
  });

  it("sends no usage chunk nor usage fields unless asked, and the role even when the run had no text", () => {
    const encoder = chatChunkEncoder(head, { includeUsage: false });
    const out = events(encoder.encode({ seq: 1, kind: "done", payload: { runId: "run_1", object: "", metadata } }));
    expect(out).toHaveLength(3);
    expect(out[0]).not.toHaveProperty("usage");
    expect(out.at(-1)).toBe("[DONE]");
  });

  it("ends with an error in OpenAI's shape at a restart or an error, and sends nothing after it", () => {
    const restarted = chatChunkEncoder(head, { includeUsage: false });
    restarted.encode({ seq: 1, kind: "item", text: "{" });
    const [error] = events(restarted.encode({ seq: 2, kind: "restart", attempt: 2 }));
    expect(error).toMatchObject({ error: { type: "server_error", param: null, code: "output_restarted", message: expect.stringContaining("/api/v1/runs/run_1") } });
    expect(restarted.encode({ seq: 3, kind: "item", text: "{}" })).toBe("");
    expect(restarted.encode({ seq: 4, kind: "done", payload: { runId: "run_1", object: {}, metadata } })).toBe("");

    const failed = chatChunkEncoder(head, { includeUsage: false });
    const problem = { type: "/docs#error-model_timeout", title: "The model timed out", status: 504, detail: "No answer in 60 s.", code: "model_timeout", runId: "run_1" };
    expect(events(failed.encode({ seq: 1, kind: "error", problem }))).toEqual([
      { error: { message: "No answer in 60 s. (run run_1)", type: "server_error", param: null, code: "model_timeout" } },
    ]);

    // A refusal in the stream names the request's own parameters (the input was messages[2]).
    const named = chatChunkEncoder(head, { includeUsage: false, paramOf: paramMapper(2) });
    const refused = { type: "/docs#error-validation_failed", title: "t", status: 400, detail: "d", code: "validation_failed", errors: [{ path: "/input", message: "too long" }] };
    expect(events(named.encode({ seq: 1, kind: "error", problem: refused }))[0]).toMatchObject({ error: { param: "messages[2].content", message: "messages[2].content: too long" } });
  });

  it("says length, in the completion and the stream, when the model reached its output limit", () => {
    const cut = { ...metadata, finishReason: "length" };
    expect(completionOf(head, "Once upon a", cut).choices[0]!.finish_reason).toBe("length");
    expect(completionOf(head, "Done.", metadata).choices[0]!.finish_reason).toBe("stop");
    const encoder = chatChunkEncoder(head, { includeUsage: false });
    const out = events(encoder.encode({ seq: 1, kind: "item", text: "Once upon a" }) + encoder.encode({ seq: 2, kind: "done", payload: { runId: "run_1", object: "Once upon a", metadata: cut } }));
    expect(out.map((e) => (e === "[DONE]" ? e : e.choices[0]?.finish_reason))).toEqual([null, null, "length", "[DONE]"]);
  });
});
