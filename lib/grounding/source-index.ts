import "server-only";
import type { SourceDocument } from "./grounding-types";

/**
 * One source text indexed once: its folded form (lower case, accents dropped, every run of spaces,
 * punctuation and symbols one space) with a map from each folded character back to the original
 * offset, the PDF page starts, and (built on first use) its folded tokens. Everything that searches
 * a source searches these, so the cost stays linear in the document's size.
 */
export interface SourceIndex {
  doc: SourceDocument;
  folded: string;
  /** Original offset of each folded character. */
  map: Int32Array;
  /** Offsets where `[page n]` headers start, with their page numbers (PDFs only). */
  pages: { start: number; page: number }[];
  tokens?: TokenIndex;
}

export interface TokenIndex {
  /** Start and end (folded offsets) of each token. */
  starts: Int32Array;
  ends: Int32Array;
  /** Token text → every token position where it occurs, in order. */
  positions: Map<string, number[]>;
}

const SEPARATOR = /[\s\p{P}\p{S}]/u;

/** One character folded: lower case without its accent; "" for a separator. */
function foldChar(c: string): string {
  const code = c.charCodeAt(0);
  if (code < 128) {
    if ((code >= 48 && code <= 57) || (code >= 97 && code <= 122)) return c;
    if (code >= 65 && code <= 90) return String.fromCharCode(code + 32);
    return "";
  }
  if (SEPARATOR.test(c)) return "";
  const lower = c.toLowerCase();
  if (lower.length !== 1) return c;
  if (lower.charCodeAt(0) < 128) return lower;
  const base = lower.normalize("NFD")[0]!;
  return base;
}

/** A string folded as source texts are (for values: trimmed, no leading or trailing space). */
export function fold(text: string): string {
  let out = "";
  let space = true;
  for (const c of text) {
    const f = foldChar(c);
    if (f === "") {
      if (!space) out += " ";
      space = true;
    } else {
      out += f;
      space = false;
    }
  }
  return out.endsWith(" ") ? out.slice(0, -1) : out;
}

export function indexSource(doc: SourceDocument): SourceIndex {
  const { text } = doc;
  let folded = "";
  const map = new Int32Array(text.length + 1);
  let n = 0;
  let space = true;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // A surrogate pair is one character: folded as a unit (mapped to its first half).
    const c = code >= 0xd800 && code < 0xdc00 && i + 1 < text.length ? text.slice(i, i + 2) : text[i]!;
    const f = foldChar(c);
    if (f === "") {
      if (!space) {
        folded += " ";
        map[n++] = i;
      }
      space = true;
    } else {
      folded += f;
      map[n++] = i;
      space = false;
    }
    if (c.length === 2) i++;
  }
  const pages: SourceIndex["pages"] = [];
  if (doc.pdf) {
    const header = /(?:^|\n)\[page (\d+)\]\n/g;
    for (let m = header.exec(text); m; m = header.exec(text)) pages.push({ start: m.index, page: Number(m[1]) });
  }
  return { doc, folded, map: map.subarray(0, n), pages };
}

/** The original [start, end) of folded [from, to). */
export function originalSpan(index: SourceIndex, from: number, to: number): [number, number] {
  const start = index.map[from]!;
  const last = index.map[to - 1]!;
  const code = index.doc.text.charCodeAt(last);
  return [start, last + (code >= 0xd800 && code < 0xdc00 ? 2 : 1)];
}

/** The PDF page an original offset falls on (undefined for other sources). */
export function pageAt(index: SourceIndex, offset: number): number | undefined {
  let page: number | undefined;
  for (const p of index.pages) {
    if (p.start > offset) break;
    page = p.page;
  }
  return page;
}

/**
 * Where a folded value (words separated by single spaces) occurs in the folded source as whole
 * words: the positions of its rarest word, each checked in place. Costs the rarest word's
 * occurrences, not the source's length.
 */
export function foldedOccurrences(index: SourceIndex, value: string, limit: number): number[] {
  const tokens = tokensOf(index);
  const words = value.split(" ");
  let anchor = -1;
  let list: number[] | undefined;
  for (const [j, word] of words.entries()) {
    const at = tokens.positions.get(word);
    if (!at) return [];
    if (!list || at.length < list.length) [anchor, list] = [j, at];
  }
  const out: number[] = [];
  const { folded } = index;
  for (const p of list!) {
    const s = p - anchor;
    if (s < 0 || s + words.length > tokens.starts.length) continue;
    const from = tokens.starts[s]!;
    const end = from + value.length;
    if ((end === folded.length || folded[end] === " ") && folded.startsWith(value, from)) {
      out.push(from);
      if (out.length >= limit) break;
    }
  }
  return out;
}

export function tokensOf(index: SourceIndex): TokenIndex {
  if (index.tokens) return index.tokens;
  const starts: number[] = [];
  const ends: number[] = [];
  const positions = new Map<string, number[]>();
  const { folded } = index;
  let i = 0;
  while (i < folded.length) {
    while (i < folded.length && folded[i] === " ") i++;
    if (i >= folded.length) break;
    let j = folded.indexOf(" ", i);
    if (j < 0) j = folded.length;
    const token = folded.slice(i, j);
    const list = positions.get(token);
    if (!list) positions.set(token, [starts.length]);
    else list.push(starts.length);
    starts.push(i);
    ends.push(j);
    i = j;
  }
  index.tokens = { starts: Int32Array.from(starts), ends: Int32Array.from(ends), positions };
  return index.tokens;
}
