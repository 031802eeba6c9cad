import { describe, expect, it } from "vitest";
import { emptyComposition, fromPermalinkHash, restoreComposition, toPermalinkHash, toRequestBody } from "./composition";

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
    expect(fromPermalinkHash(hash)).toEqual({ composition: { ...c, attachments: [c.attachments[1]] }, problems: [] });
    expect(fromPermalinkHash("#c=!!")).toBeNull();
  });

  it("carries a draft run's definition beside the composition, checked as a request's draft is", () => {
    const c = { ...emptyComposition("{}"), workflowSlug: "invoice@3", input: "x" };
    const draft = { model: "free", instructions: "Edited.", temperature: 1.2, maxOutputTokens: null, retries: 1, contexts: ["notes"] };
    expect(fromPermalinkHash(toPermalinkHash(c, draft))).toEqual({ composition: c, problems: [], draft });
    expect(fromPermalinkHash(toPermalinkHash(c))).toEqual({ composition: c, problems: [] });
    const bad = fromPermalinkHash(toPermalinkHash(c, { temperature: 7 } as never))!;
    expect(bad.composition).toEqual(c);
    expect(bad.draft).toBeUndefined();
    expect(bad.problems).toEqual([expect.stringMatching(/^draft\/temperature: .*the saved prompt is used$/)]);
  });

  it("keeps what a crafted permalink holds of the right types, and names each field it drops (issue 31)", () => {
    const link = (value: unknown) => {
      const bytes = new TextEncoder().encode(JSON.stringify(value));
      return `#c=${btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}`;
    };
    const base = emptyComposition("{}");
    // Each of these once left the page on "Something went wrong".
    const crafted = fromPermalinkHash(link({ operation: "drop-tables", input: 42, contextSlugs: "a,b", attachments: [{ file: 7 }], schemaText: { type: "object" }, workflowSlug: "kept", extra: true }))!;
    expect(crafted.composition).toEqual({ ...base, workflowSlug: "kept" });
    expect(crafted.problems).toEqual([
      expect.stringMatching(/^operation: must be "generate-object"/),
      expect.stringMatching(/^input: .*left at its default$/),
      expect.stringMatching(/^contextSlugs: /),
      expect.stringMatching(/^attachments\/0\/name: expected string/),
      expect.stringMatching(/^schemaText: /),
      "extra: not a field genserve knows; ignored",
    ]);
    for (const value of [null, [1, 2], "text", 3]) expect(fromPermalinkHash(link(value))).toEqual({ composition: base, problems: ["it does not hold a composition"] });
    expect(fromPermalinkHash(`#c=${btoa("{not json").replace(/=+$/, "")}`)!.problems).toEqual(["it is not a permalink genserve made (its data cannot be read)"]);
    // What this browser remembered goes through the same check.
    expect(restoreComposition({ ...base, input: "ok", threadId: ["x"] }, base)).toEqual({ composition: { ...base, input: "ok" }, problems: [expect.stringMatching(/^threadId: /)] });
  });
});
