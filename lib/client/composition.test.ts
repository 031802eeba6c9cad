import { describe, expect, it } from "vitest";
import { emptyComposition, fromPermalinkHash, toPermalinkHash, toRequestBody } from "./composition";

describe("composition", () => {
  it("builds each operation's body", () => {
    const c = { ...emptyComposition('{"type":"object"}'), workflowSlug: "w", input: "hi", contextSlugs: ["c"] };
    expect(toRequestBody(c)).toEqual({ input: "hi", workflowSlug: "w", contextSlugs: ["c"], schema: { type: "object" } });
    expect(toRequestBody({ ...c, operation: "generate-text", customPropertiesText: '{"a":1}' })).toEqual({
      input: "hi",
      workflowSlug: "w",
      contextSlugs: ["c"],
      type: "event",
      callback: { url: "https://example.com/genserve/callback", customProperties: { a: 1 } },
    });
    expect(() => toRequestBody({ ...c, schemaText: "{" })).toThrow(expect.objectContaining({ path: "/schema" }));
  });

  it("round-trips through a permalink without attachment bytes", () => {
    const c = {
      ...emptyComposition('{"type":"object"}'),
      input: "héllo ✓",
      attachments: [
        { name: "a.txt", mimeType: "text/plain", size: 3, file: "aGk=" },
        { name: "b", mimeType: "", size: 0, file: "https://example.com/b.txt" },
      ],
    };
    const hash = toPermalinkHash(c);
    expect(hash).toMatch(/^#c=[A-Za-z0-9_-]+$/);
    expect(fromPermalinkHash(hash)).toEqual({ ...c, attachments: [c.attachments[1]] });
    expect(fromPermalinkHash("#c=!!")).toBeNull();
  });
});
