import { describe, expect, it } from "vitest";
import type { ModelConfig, WorkflowConfig } from "../config/config-types";
import { fitHistory, wholeHistory } from "./budget";

const model = { alias: "small", contextWindow: 400 } as ModelConfig;
const workflow = { maxOutputTokens: 100 } as WorkflowConfig;
const prompt = { system: "Be brief.", messages: [{ role: "user" as const, content: "Now?" }] };
const turn = (role: "user" | "assistant", words: number) => ({ role, content: "word ".repeat(words) });

describe("a request's own history", () => {
  it("is kept whole, odd turns included, when it fits", () => {
    const history = [turn("user", 5), turn("assistant", 5), turn("user", 5)];
    expect(wholeHistory(history, prompt, model, workflow)).toEqual(history);
  });

  it("is refused at /history when it does not fit, where a thread's history would be cut", () => {
    const history = [turn("user", 200), turn("assistant", 200), turn("user", 5), turn("assistant", 5)];
    const refusal = (() => {
      try {
        wholeHistory(history, prompt, model, workflow);
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toMatchObject({ code: "payload_too_large", errors: [{ path: "/history" }] });
    // A thread's history drops its oldest exchanges instead.
    const thread = history.map((m) => ({ ...m, runId: null, createdAt: "" }));
    expect(fitHistory(thread, prompt, model, workflow)).toHaveLength(2);
  });
});
