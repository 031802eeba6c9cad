import { describe, expect, it } from "vitest";
import { fitsOpenAIStrict, openAIStrictProblems } from "./openai-strict";

describe("OpenAI strict mode", () => {
  it("fits schemas whose objects all close and require every property", () => {
    const schema = { type: "object", properties: { a: { type: "array", items: { type: "object", properties: { b: { type: "string" } }, required: ["b"], additionalProperties: false } } }, required: ["a"], additionalProperties: false };
    expect(fitsOpenAIStrict(schema)).toBe(true);
    expect(openAIStrictProblems(schema)).toEqual([]);
  });

  it("says what keeps a schema out of strict mode, and where", () => {
    const schema = {
      type: "object",
      properties: { a: { type: "string" }, "x/y": { type: "object", properties: { c: { type: "integer" } }, required: ["c"] }, d: { not: { const: 1 } } },
      required: ["a"],
      additionalProperties: false,
    };
    expect(fitsOpenAIStrict(schema)).toBe(false);
    expect(openAIStrictProblems(schema)).toEqual(['optional properties "x/y", "d" at /', "additionalProperties is not false at /properties/x~1y", "not at /properties/d"]);
  });
});
