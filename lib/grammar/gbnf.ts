import "server-only";
/**
 * GBNF text helpers (llama.cpp's grammar format: https://github.com/ggml-org/llama.cpp/blob/master/grammars/README.md).
 * Everything that turns characters into GBNF syntax lives here, so escaping is decided once.
 */

/** A range of code points, inclusive. */
export type CharRange = readonly [number, number];

const hex = (cp: number) =>
  cp <= 0xff ? `\\x${cp.toString(16).padStart(2, "0")}` : cp <= 0xffff ? `\\u${cp.toString(16).padStart(4, "0")}` : `\\U${cp.toString(16).padStart(8, "0")}`;

/** A GBNF string literal matching exactly `text`. */
export function literal(text: string): string {
  let out = '"';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else if (cp < 0x20 || cp === 0x7f) out += hex(cp);
    else out += ch;
  }
  return `${out}"`;
}

const classChar = (cp: number) =>
  /[A-Za-z0-9]/.test(String.fromCodePoint(cp)) || (cp > 0x7f && cp !== 0x2028 && cp !== 0x2029) ? String.fromCodePoint(cp) : hex(cp);

/** A GBNF character class. `negated` builds `[^...]`. */
export function charClass(ranges: readonly CharRange[], negated = false): string {
  const body = ranges.map(([lo, hi]) => (lo === hi ? classChar(lo) : `${classChar(lo)}-${classChar(hi)}`)).join("");
  return `[${negated ? "^" : ""}${body}]`;
}

/** Normalises ranges: sorted, merged, empty ones dropped. */
export function mergeRanges(ranges: readonly CharRange[]): CharRange[] {
  const sorted = ranges.filter(([lo, hi]) => lo <= hi).sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

/** `ranges` minus `remove`. */
export function subtractRanges(ranges: readonly CharRange[], remove: readonly CharRange[]): CharRange[] {
  let current = mergeRanges(ranges);
  for (const [rlo, rhi] of mergeRanges(remove)) {
    const next: CharRange[] = [];
    for (const [lo, hi] of current) {
      if (rhi < lo || rlo > hi) next.push([lo, hi]);
      else {
        if (lo < rlo) next.push([lo, rlo - 1]);
        if (hi > rhi) next.push([rhi + 1, hi]);
      }
    }
    current = next;
  }
  return current;
}

export const MAX_CODE_POINT = 0x10ffff;

/** The complement of `ranges` within all code points. */
export const complementRanges = (ranges: readonly CharRange[]) => subtractRanges([[0, MAX_CODE_POINT]], ranges);

/** Characters that appear in JSON string text only escaped. */
const NEEDS_ESCAPE: CharRange[] = [
  [0, 0x1f],
  [0x22, 0x22],
  [0x5c, 0x5c],
];

const SHORT_ESCAPES: Record<number, string> = { 0x22: '\\"', 0x5c: "\\\\", 0x0a: "\\n", 0x09: "\\t", 0x0d: "\\r", 0x08: "\\b", 0x0c: "\\f" };

/**
 * GBNF for one character of a JSON string's text whose decoded value is in `ranges`: the character
 * itself where JSON allows it raw, the short escape (`\"`, `\\`, `\n`…) otherwise. Other control
 * characters are left out (a subset, so every output still matches).
 */
export function jsonStringChar(ranges: readonly CharRange[]): string | null {
  const merged = mergeRanges(ranges);
  const raw = subtractRanges(merged, NEEDS_ESCAPE);
  const alternatives: string[] = [];
  if (raw.length) {
    const complement = complementRanges(raw);
    // A short negated class reads better and compiles to the same thing.
    alternatives.push(complement.length < raw.length ? charClass(complement, true) : charClass(raw));
  }
  for (const [cp, escape] of Object.entries(SHORT_ESCAPES)) {
    const code = Number(cp);
    if (merged.some(([lo, hi]) => lo <= code && code <= hi)) alternatives.push(literal(escape));
  }
  if (!alternatives.length) return null;
  return alt(alternatives);
}

/** Counts above this are not written out as one repetition (llama.cpp stops enforcing larger ones). */
export const MAX_REPEAT = 2000;

/** `x{min,max}` with llama.cpp's repetition syntax; `max` undefined means unbounded. */
export function repeat(item: string, min: number, max: number | undefined): string {
  if (max === 0) return "";
  if (min === 0 && max === undefined) return `${item}*`;
  if (min === 1 && max === undefined) return `${item}+`;
  if (min === 0 && max === 1) return `${item}?`;
  if (max === undefined) return `${item}{${min},}`;
  if (min === max) return min === 1 ? item : `${item}{${min}}`;
  return `${item}{${min},${max}}`;
}

/** Joins alternatives, parenthesised when there is more than one. */
export const alt = (items: readonly string[]): string => (items.length === 1 ? items[0]! : `(${items.join(" | ")})`);
