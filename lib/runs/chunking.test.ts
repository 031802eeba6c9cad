import { describe, expect, it } from "vitest";
import { bm25, chunkText, selectChunks } from "./chunking";

const manual = [
  "Returns are accepted within 30 days of delivery with the original receipt.",
  "Shipping to islands takes five to seven working days and costs extra.",
  "Warranty claims for the kettle need the serial number printed under the base.",
  "Gift cards never expire and can be used online and in stores.",
].join("\n\n");

describe("large-context chunking", () => {
  it("splits on paragraphs into bounded chunks with stable ids", () => {
    const chunks = chunkText("manual", manual, 90);
    expect(chunks.map((c) => c.id)).toEqual(["manual#0", "manual#1", "manual#2", "manual#3"]);
    expect(chunks.every((c) => c.text.length <= 90)).toBe(true);
    expect(chunkText("x", "a".repeat(250), 100).map((c) => c.text.length)).toEqual([100, 100, 50]);
  });

  it("ranks the chunk that matches the query first (BM25)", () => {
    const chunks = chunkText("manual", manual, 90);
    const scores = bm25(chunks, "Where is the serial number of my kettle for a warranty claim?");
    expect(scores.indexOf(Math.max(...scores))).toBe(2);
  });

  it("keeps the best chunks that fit the budget, in document order", () => {
    const chunks = chunkText("manual", manual, 90);
    const chosen = selectChunks(chunks, "kettle warranty, and do gift cards expire?", 160);
    expect(chosen.map((c) => c.id)).toEqual(["manual#2", "manual#3"]);
  });
});
