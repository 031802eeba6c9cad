import { describe, expect, it } from "vitest";
import { buildPrompt, retryFeedback } from "./prompt";

describe("buildPrompt", () => {
  it("orders instructions, contexts, attachments and the output contract; input is the user turn", () => {
    const prompt = buildPrompt({
      workflow: { instructions: "Extract invoices.\n" },
      contexts: [
        { slug: "rules", title: "Rules", content: "EUR by default." },
        { slug: "tone", title: 'Say "hi"', content: "Be brief." },
      ],
      attachments: [{ index: 0, mimeType: "text/csv", text: "a,b\n1,2" }],
      input: "Invoice 7",
      output: { schema: { type: "object" }, inPrompt: true },
    });
    expect(prompt.system).toBe(
      [
        "Extract invoices.",
        '<context slug="rules" title="Rules">\nEUR by default.\n</context>',
        '<context slug="tone" title="Say &quot;hi&quot;">\nBe brief.\n</context>',
        '<attachment index="0" type="text/csv">\na,b\n1,2\n</attachment>',
        'Answer with a single JSON value that validates against this JSON Schema, and nothing else (no prose, no code fences):\n{"type":"object"}',
      ].join("\n\n"),
    );
    expect(prompt.messages).toEqual([{ role: "user", content: "Invoice 7" }]);
  });

  it("leaves the schema out of the prompt when the provider enforces it natively, and adds nothing for text", () => {
    expect(buildPrompt({ workflow: { instructions: "" }, contexts: [], attachments: [], input: "x", output: { schema: { type: "object" }, inPrompt: false } }).system).toBe(
      "Answer with a single JSON value that follows the given schema, and nothing else.",
    );
    expect(buildPrompt({ workflow: { instructions: "" }, contexts: [], attachments: [], input: "x" }).system).toBe("");
  });

  it("feeds validation errors back after the invalid answer", () => {
    expect(retryFeedback('{"a":1}', [{ path: "/a", message: "must be string" }])).toEqual([
      { role: "assistant", content: '{"a":1}' },
      { role: "user", content: "That answer does not validate against the JSON Schema:\n- /a: must be string\nReply again with only the corrected JSON value." },
    ]);
  });
});

describe("buildPrompt with history and images", () => {
  it("puts thread history before the input, and images with the input", () => {
    const image = new Uint8Array([1, 2, 3]);
    const prompt = buildPrompt({
      workflow: { instructions: "Answer." },
      contexts: [],
      attachments: [],
      history: [
        { role: "user", content: "earlier question" },
        { role: "assistant", content: "earlier answer" },
      ],
      images: [{ index: 0, mimeType: "image/png", data: image }],
      input: "What is in the picture?",
    });
    expect(prompt.system).toBe("Answer.");
    expect(prompt.messages).toEqual([
      { role: "user", content: "earlier question" },
      { role: "assistant", content: "earlier answer" },
      { role: "user", content: [{ type: "text", text: "What is in the picture?" }, { type: "image", image, mediaType: "image/png" }] },
    ]);
  });
});
