import { describe, expect, it } from "vitest";
import { alignObject } from "./align";
import type { GroundedLeaf, SourceDocument } from "./grounding-types";

const BUDGET = { timeMs: 60_000, work: 10_000_000 };
const input = (text: string): SourceDocument[] => [{ source: "input", text }];
const one = (value: unknown, text: string, key = "value"): GroundedLeaf => alignObject({ [key]: value }, input(text), BUDGET)[0]!;

describe("alignObject", () => {
  it("finds a string verbatim, with offsets into the source", () => {
    const text = "Customer: ACME Corp. Order 7";
    const leaf = one("ACME Corp", text, "customer");
    expect(leaf).toMatchObject({ pointer: "/customer", match: "exact", source: "input", start: 10, end: 19, text: "ACME Corp" });
  });

  it("folds case, spacing, punctuation and accents", () => {
    const leaf = one("muller sohne gmbh", "Bill to: Müller &  Söhne, GmbH\nBerlin", "customer");
    expect(leaf).toMatchObject({ match: "normalized", text: "Müller &  Söhne, GmbH" });
  });

  it("does not find a word inside another word", () => {
    expect(one("Acme", "Acmeville Ltd")).toMatchObject({ match: "none", reason: "not_found" });
  });

  it.each([
    ["1.234,50 €", 1234.5],
    ["1,234.50", 1234.5],
    ["1 234,5", 1234.5],
    ["$1,234.50", 1234.5],
    ["EUR 1'234.50", 1234.5],
    ["12.5%", 0.125],
    ["12.5%", 12.5],
    ["-42", -42],
  ])("reads the number %s as %s", (written, value) => {
    const leaf = one(value, `Amount: ${written} (paid)`, "amount");
    expect(["exact", "normalized"]).toContain(leaf.match);
    expect(leaf.text).toContain(written.replace(/^(EUR |\$)/, "").replace(/ €$/, "").replace(/%$/, ""));
  });

  it("calls a number exact when it is written as JSON would write it", () => {
    expect(one(1234.5, "Total 1234.5")).toMatchObject({ match: "exact", text: "1234.5" });
  });

  it("does not take a number from inside a longer one or a date", () => {
    expect(one(234, "Ref 1234 and 1,234.50").match).toBe("none");
    expect(one(3, "Date 2026-03-03").match).toBe("none");
  });

  it.each([
    ["3 March 2026"],
    ["March 3, 2026"],
    ["Mar 3, 2026"],
    ["3rd of March 2026"],
    ["2026-03-03"],
    ["03.03.2026"],
    ["03/03/2026"],
    ["3. März 2026"],
  ])("reads the date %s as 2026-03-03", (written) => {
    const leaf = one("2026-03-03", `Signed on ${written} in Berlin`, "signedOn");
    expect(leaf.match).toBe(written === "2026-03-03" ? "exact" : "normalized");
    expect(leaf.text).toBe(written);
  });

  it("reads a slashed date's order from the document's unambiguous dates, and not at all without them", () => {
    expect(one("2026-04-05", "Issued 04/05/2026").match).toBe("none");
    expect(one("2026-04-05", "Issued 04/05/2026, due 04/25/2026")).toMatchObject({ match: "normalized", text: "04/05/2026" });
    expect(one("2026-05-04", "Issued 04/05/2026, due 25/05/2026")).toMatchObject({ match: "normalized", text: "04/05/2026" });
  });

  it("grounds the date part of a date-time", () => {
    expect(one("2026-03-03T10:00:00Z", "Meeting on 3 March 2026 at 10:00")).toMatchObject({ match: "normalized", text: "3 March 2026" });
  });

  it("grounds a boolean only where the source states it next to the property's name", () => {
    expect(one(true, "Signed: yes\nRenewal: no", "signed")).toMatchObject({ match: "normalized", text: "yes" });
    expect(one(false, "Signed: yes\nAuto renewal: no", "autoRenewal")).toMatchObject({ match: "normalized", text: "no" });
    expect(one(true, "[x] Signed by both parties", "signed")).toMatchObject({ match: "normalized", text: "[x]" });
    expect(one(false, "Signed: yes", "signed")).toMatchObject({ match: "none", reason: "contradicted" });
    expect(one(true, "The contract was signed.", "signed")).toMatchObject({ match: "none", reason: "not_found" });
  });

  it("matches a misspelt or reworded string approximately, with a score, and never a number", () => {
    const leaf = one("Acme Industries Incorporated", "Supplier: Acme Industries Incorporatd, Berlin", "supplier");
    expect(leaf.match).toBe("fuzzy");
    expect(leaf.score).toBeGreaterThanOrEqual(0.8);
    expect(leaf.score).toBeLessThan(1);
    expect(one(1234.51, "Total: 1,234.50").match).toBe("none");
    expect(one("Completely different words here", "Supplier: Acme Industries, Berlin").match).toBe("none");
  });

  it("reports leaves too short to ground, and values that are absent", () => {
    const leaves = alignObject({ a: "x", b: "", c: "Nowhere to be seen", d: null }, input("x marks the spot"), BUDGET);
    expect(leaves).toEqual([
      { pointer: "/a", match: "none", reason: "too_short" },
      { pointer: "/b", match: "none", reason: "too_short" },
      { pointer: "/c", match: "none", reason: "not_found" },
    ]);
  });

  it("prefers the place labelled with the property's name over a distractor", () => {
    const text = "Line 1: Consulting 1,200.00\nLine 2: Travel 300.00\nSubtotal: 1,500.00\nTotal: 1,200.00";
    const leaves = alignObject({ total: 1200, items: [{ amount: 1200 }] }, input(text), BUDGET);
    expect(leaves[0]).toMatchObject({ pointer: "/total", start: text.lastIndexOf("1,200.00") });
    expect(leaves[1]).toMatchObject({ pointer: "/items/0/amount", start: text.indexOf("1,200.00") });
  });

  it("prefers the place nearest to the sibling fields' places", () => {
    const text = "Alice Smith, born 1990, Paris\nBob Jones, born 1985, Paris\nCarol White, born 1990, Rome";
    const leaves = alignObject({ people: [{ name: "Carol White", year: 1990 }] }, input(text), BUDGET);
    expect(leaves[1]).toMatchObject({ pointer: "/people/0/year", start: text.lastIndexOf("1990") });
  });

  it("names the attachment and the PDF page of a match", () => {
    const docs: SourceDocument[] = [
      { source: "input", text: "Extract the invoice." },
      { source: { attachment: 0 }, text: "[page 1]\nInvoice INV-9\n\n[page 2]\nTotal due: 99.90", pdf: true },
    ];
    const leaves = alignObject({ number: "INV-9", total: 99.9 }, docs, BUDGET);
    expect(leaves[0]).toMatchObject({ source: { attachment: 0 }, page: 1, text: "INV-9" });
    expect(leaves[1]).toMatchObject({ source: { attachment: 0 }, page: 2, match: "normalized", text: "99.90" });
  });

  it("reports leaves not reached within the work budget as such, never stalling", () => {
    const text = "word ".repeat(1000) + "Alpha Beta Gamma";
    const object = { a: "Alpha Beta Gamma", b: "Alpha Beta Gamma", c: "Alpha Beta Gamma" };
    const leaves = alignObject(object, input(text), { timeMs: 60_000, work: 2 });
    expect(leaves[0]!.match).toBe("exact");
    expect(leaves.slice(1)).toEqual([
      { pointer: "/b", match: "none", reason: "budget" },
      { pointer: "/c", match: "none", reason: "budget" },
    ]);
  });

  it("reports every leaf as budget when the clock has run out", () => {
    let t = 0;
    const leaves = alignObject({ a: "one", b: 2 }, input("one 2"), { timeMs: 10, work: 1e9 }, () => (t += 100));
    expect(leaves.map((l) => l.reason)).toEqual(["budget", "budget"]);
  });

  it("escapes pointers (RFC 6901)", () => {
    expect(alignObject({ "a/b~c": "hello" }, input("hello"), BUDGET)[0]!.pointer).toBe("/a~1b~0c");
  });
});
