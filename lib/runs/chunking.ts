import "server-only";
/**
 * Large contexts: a context bigger than its share of the model's window is split into chunks and
 * only the chunks most relevant to the input are kept, ranked with BM25 (no embedding service).
 */

export interface Chunk {
  id: string;
  text: string;
}

/** Splits on blank lines, packing paragraphs into chunks of at most `maxChars` (long ones are cut). */
export function chunkText(slug: string, text: string, maxChars: number): Chunk[] {
  const pieces: string[] = [];
  for (const paragraph of text.split(/\n\s*\n/)) {
    for (let i = 0; i < paragraph.length; i += maxChars) pieces.push(paragraph.slice(i, i + maxChars));
  }
  const chunks: string[] = [];
  let current = "";
  for (const piece of pieces) {
    if (current && current.length + piece.length + 2 > maxChars) {
      chunks.push(current);
      current = "";
    }
    current = current ? `${current}\n\n${piece}` : piece;
  }
  if (current.trim()) chunks.push(current);
  return chunks.map((chunk, i) => ({ id: `${slug}#${i}`, text: chunk }));
}

const tokenize = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** BM25 scores of each chunk for the query (k1 = 1.2, b = 0.75). */
export function bm25(chunks: readonly Chunk[], query: string): number[] {
  const docs = chunks.map((c) => tokenize(c.text));
  const avgLength = docs.reduce((n, d) => n + d.length, 0) / Math.max(1, docs.length);
  const terms = [...new Set(tokenize(query))];
  const frequencies = docs.map((doc) => {
    const counts = new Map<string, number>();
    for (const token of doc) counts.set(token, (counts.get(token) ?? 0) + 1);
    return counts;
  });
  const k1 = 1.2;
  const b = 0.75;
  return docs.map((doc, i) =>
    terms.reduce((score, term) => {
      const containing = frequencies.filter((f) => f.has(term)).length;
      if (containing === 0) return score;
      const idf = Math.log(1 + (docs.length - containing + 0.5) / (containing + 0.5));
      const tf = frequencies[i]!.get(term) ?? 0;
      return score + idf * ((tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * doc.length) / Math.max(1, avgLength))));
    }, 0),
  );
}

/**
 * The most relevant chunks that fit `budgetChars`, best first when choosing, returned in document
 * order so the excerpt reads as the original does.
 */
export function selectChunks(chunks: readonly Chunk[], query: string, budgetChars: number): Chunk[] {
  const scores = bm25(chunks, query);
  const ranked = chunks.map((chunk, i) => ({ chunk, i, score: scores[i]! })).sort((x, y) => y.score - x.score || x.i - y.i);
  const chosen: { chunk: Chunk; i: number }[] = [];
  let used = 0;
  for (const candidate of ranked) {
    if (used + candidate.chunk.text.length > budgetChars) continue;
    chosen.push(candidate);
    used += candidate.chunk.text.length;
  }
  return chosen.sort((x, y) => x.i - y.i).map((c) => c.chunk);
}
