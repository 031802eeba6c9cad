import "server-only";
import { isoDateOf, scanDates, type DateToken } from "./date-scan";
import { fuzzyFind } from "./fuzzy";
import type { GroundedLeaf } from "./grounding-types";
import type { Leaf } from "./leaves";
import { numberKey, readNumber, scanNumbers, type NumberToken } from "./number-scan";
import { fold, foldedOccurrences, indexSource, originalSpan, type SourceIndex } from "./source-index";
import type { SourceDocument } from "./grounding-types";

/** A place a leaf's value may have come from (original offsets in source `doc`). */
export interface Candidate {
  doc: number;
  start: number;
  end: number;
  match: "exact" | "normalized" | "fuzzy";
  score?: number;
}

/** Per leaf: at most this many places are weighed. */
const MAX_CANDIDATES = 64;
const NUMERIC_STRING = /^[-−]?\s?[$€£¥₹]?\s?\d[\d.,'\u00a0\u202f ]*\s?(?:%|€|\$|£)?$/;
const TRUE_WORDS = new Set(["yes", "true", "y", "ja", "oui", "si", "sí", "x", "✓", "✔", "☑", "☒"]);
const FALSE_WORDS = new Set(["no", "false", "n", "nein", "non", "☐"]);

/** The sources, each indexed once; numbers and dates scanned on first need. */
export class Sources {
  readonly indexes: SourceIndex[];
  private numbers?: Map<string, (NumberToken & { doc: number })[]>;
  private dates?: Map<string, (DateToken & { doc: number })[]>;
  private dateTokens?: DateToken[][];

  constructor(docs: readonly SourceDocument[]) {
    this.indexes = docs.map(indexSource);
  }

  private datesByDoc(): DateToken[][] {
    return (this.dateTokens ??= this.indexes.map((i) => scanDates(i.doc.text)));
  }

  numberTokens(key: string) {
    if (!this.numbers) {
      this.numbers = new Map();
      const dates = this.datesByDoc();
      this.indexes.forEach((index, doc) => {
        const spans = dates[doc]!;
        for (const token of scanNumbers(index.doc.text)) {
          // The parts of a date are not numbers of their own.
          if (spans.some((d) => token.start < d.end && token.end > d.start)) continue;
          for (const value of new Set(token.values.map(numberKey))) {
            const list = this.numbers!.get(value);
            if (!list) this.numbers!.set(value, [{ ...token, doc }]);
            else if (list.length < MAX_CANDIDATES) list.push({ ...token, doc });
          }
        }
      });
    }
    return this.numbers.get(key) ?? [];
  }

  dateTokensFor(iso: string) {
    if (!this.dates) {
      this.dates = new Map();
      this.datesByDoc().forEach((tokens, doc) => {
        for (const t of tokens) {
          const list = this.dates!.get(t.iso);
          if (!list) this.dates!.set(t.iso, [{ ...t, doc }]);
          else if (list.length < MAX_CANDIDATES) list.push({ ...t, doc });
        }
      });
    }
    return this.dates.get(iso) ?? [];
  }
}

const isWordChar = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}]/u.test(c);

/**
 * A string's places as whole words, found through the folded index: `exact` where the original
 * text there is the value as written (with its leading and trailing punctuation), else `normalized`.
 */
function strings(sources: Sources, value: string, folded: string, out: Candidate[]) {
  const lead = value.search(/[\p{L}\p{N}]/u);
  sources.indexes.forEach((index, doc) => {
    const text = index.doc.text;
    for (const at of foldedOccurrences(index, folded, MAX_CANDIDATES - out.length)) {
      const [start, end] = originalSpan(index, at, at + folded.length);
      const from = start - Math.max(0, lead);
      if (lead >= 0 && text.startsWith(value, from) && !isWordChar(text[from + value.length]) && !(isWordChar(value[0]) && isWordChar(text[from - 1]))) {
        out.push({ doc, start: from, end: from + value.length, match: "exact" });
      } else {
        out.push({ doc, start, end, match: "normalized" });
      }
    }
  });
}

function numbers(sources: Sources, values: number[], exactCore: string | null, out: Candidate[]) {
  const seen = new Set<string>();
  for (const value of values) {
    for (const t of sources.numberTokens(numberKey(value))) {
      const id = `${t.doc}:${t.start}`;
      if (seen.has(id) || out.length >= MAX_CANDIDATES) continue;
      seen.add(id);
      out.push({ doc: t.doc, start: t.start, end: t.end, match: t.core === exactCore ? "exact" : "normalized" });
    }
  }
}

function dates(sources: Sources, iso: string, out: Candidate[]) {
  for (const t of sources.dateTokensFor(iso)) {
    if (out.length >= MAX_CANDIDATES) break;
    if (out.some((c) => c.doc === t.doc && c.start === t.start)) continue;
    out.push({ doc: t.doc, start: t.start, end: t.end, match: "normalized" });
  }
}

/**
 * A boolean is grounded only where the source states it next to the property's name: `Signed:
 * yes`, `[x] Signed`, `Renewal: false`. A statement of the other value makes it `contradicted`.
 */
function booleans(sources: Sources, leaf: Leaf, out: Candidate[]): "contradicted" | null {
  if (leaf.words.length === 0) return null;
  const phrase = leaf.words.join(" ");
  let contradicted = false;
  sources.indexes.forEach((index, doc) => {
    for (const at of foldedOccurrences(index, phrase, MAX_CANDIDATES)) {
      if (out.length >= MAX_CANDIDATES) break;
      const [start, end] = originalSpan(index, at, at + phrase.length);
      const text = index.doc.text;
      const lineEnd = text.indexOf("\n", end);
      const after = text.slice(end, Math.min(lineEnd < 0 ? text.length : lineEnd, end + 60));
      const before = text.slice(Math.max(0, text.lastIndexOf("\n", start - 1) + 1, start - 6), start);
      let said: boolean | null = null;
      let span: [number, number] | null = null;
      const box = /(\[[xX✓✔ ]\]|[☑☒☐])\s*$/u.exec(before);
      if (box) {
        said = box[1] !== "[ ]" && box[1] !== "☐";
        const s = start - before.length + box.index;
        span = [s, s + box[1]!.length];
      } else {
        const word = /^[^\p{L}\p{N}\n]{0,3}\s*(?:[\p{L}\s]{0,30}?[:=–-]\s*)?([\p{L}✓✔]+)(?![\p{L}])/u.exec(after);
        const w = word?.[1]?.toLowerCase();
        if (w && (TRUE_WORDS.has(w) || FALSE_WORDS.has(w))) {
          said = TRUE_WORDS.has(w);
          const s = end + word!.index + word![0].length - w.length;
          span = [s, s + w.length];
        }
      }
      if (said === null || !span) continue;
      if (said !== leaf.value) contradicted = true;
      else out.push({ doc, start: span[0], end: span[1], match: "normalized" });
    }
  });
  return out.length === 0 && contradicted ? "contradicted" : null;
}

/** Every place `leaf` may have come from, best kinds first; or why there is none. */
export function findCandidates(sources: Sources, leaf: Leaf, spend: (units: number) => boolean): Candidate[] | GroundedLeaf["reason"] {
  const out: Candidate[] = [];
  const { value } = leaf;
  if (typeof value === "boolean") return booleans(sources, leaf, out) ?? out;
  if (typeof value === "number") {
    numbers(sources, [value], String(value), out);
    return out;
  }
  const trimmed = value.trim();
  const folded = fold(trimmed);
  if (trimmed.length < 2 || folded.length < 1) return "too_short";
  strings(sources, trimmed, folded, out);
  const date = isoDateOf(trimmed);
  if (date) dates(sources, date, out);
  else if (NUMERIC_STRING.test(trimmed)) {
    const written = trimmed.replace(/[^\d.,'\u00a0\u202f ]/g, "").trim();
    const sign = /^[-−]/.test(trimmed) ? -1 : 1;
    numbers(sources, readNumber(written).map((v) => v * sign), null, out);
  }
  if (out.length > 0 || date) return out;
  for (const [doc, index] of sources.indexes.entries()) {
    for (const hit of fuzzyFind(index, folded, spend)) {
      const [start, end] = originalSpan(index, hit.from, hit.to);
      out.push({ doc, start, end, match: "fuzzy", score: hit.score });
    }
  }
  return out;
}
