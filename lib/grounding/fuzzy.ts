import "server-only";
import { tokensOf, type SourceIndex } from "./source-index";

/** The similarity that makes an approximate match: folded edit distance at most a fifth of the length. */
export const FUZZY_THRESHOLD = 0.8;
/** Longer values are matched exactly or after folding only (edit distance is quadratic). */
export const FUZZY_MAX_CHARS = 300;
/** Places of one word a fuzzy match is anchored on, at most (a common word's first ones). */
const MAX_ANCHORS = 200;

export interface FuzzyHit {
  from: number;
  to: number;
  score: number;
}

/** 1 − edit distance / longer length; `spend` is told the cells computed. */
export function similarity(a: string, b: string, spend: (cells: number) => void): number {
  if (a === b) return 1;
  const longer = Math.max(a.length, b.length);
  if (Math.abs(a.length - b.length) / longer > 1 - FUZZY_THRESHOLD) return 0;
  spend(a.length * b.length);
  let prev = new Uint16Array(b.length + 1);
  let row = new Uint16Array(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    row[0] = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const cost = ca === b.charCodeAt(j - 1) ? 0 : 1;
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
    }
    [prev, row] = [row, prev];
  }
  return 1 - prev[b.length]! / longer;
}

/**
 * The best approximate occurrences of a folded value in a source: windows of the value's token
 * count (±1) anchored on tokens the value shares with the source (words of three or more
 * characters), scored by `similarity`. Bounded: anchors per token are capped by the token index.
 */
export function fuzzyFind(index: SourceIndex, value: string, spend: (cells: number) => boolean): FuzzyHit[] {
  const words = value.split(" ");
  if (value.length > FUZZY_MAX_CHARS || value.length < 4) return [];
  const tokens = tokensOf(index);
  const seen = new Set<number>();
  const hits: FuzzyHit[] = [];
  let stop = false;
  const cost = (cells: number) => {
    if (!spend(Math.ceil(cells / 64))) stop = true;
  };
  for (const [j, word] of words.entries()) {
    if (word.length < 3) continue;
    for (const p of (tokens.positions.get(word) ?? []).slice(0, MAX_ANCHORS)) {
      for (const length of [words.length, words.length - 1, words.length + 1]) {
        const s = p - j;
        const e = s + length - 1;
        if (length < 1 || s < 0 || e >= tokens.starts.length || seen.has(s * 4 + length - words.length + 1)) continue;
        seen.add(s * 4 + length - words.length + 1);
        const from = tokens.starts[s]!;
        const to = tokens.ends[e]!;
        const score = similarity(index.folded.slice(from, to), value, cost);
        if (stop) return hits;
        if (score >= FUZZY_THRESHOLD) hits.push({ from, to, score: Math.round(score * 1000) / 1000 });
      }
    }
  }
  return hits;
}
