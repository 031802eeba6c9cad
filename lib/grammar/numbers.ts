/**
 * Integer and number bounds as GBNF. Integer intervals become digit-range alternatives (the
 * construction regex tools use for numeric ranges); numbers with integer bounds become an integer
 * part in range plus an optional fraction. Every output is in range; a few in-range spellings
 * (exponents, very long digit strings) are left out.
 */
import "server-only";
import { alt } from "./gbnf";

/** Longest integer part generated when a side is unbounded (keeps values exact in float64). */
const MAX_DIGITS = 15;

const digitClass = (lo: number, hi: number) => (lo === hi ? `"${lo}"` : lo === 0 && hi === 9 ? "[0-9]" : `[${lo}-${hi}]`);
const anyDigits = (n: number) => (n === 0 ? "" : n === 1 ? "[0-9]" : `[0-9]{${n}}`);
const join = (...parts: string[]) => parts.filter(Boolean).join(" ");

/** Decimal strings of the same length, x ≤ y. */
function sameLength(x: string, y: string): string {
  if (!x.length) return "";
  if (x[0] === y[0]) return join(`"${x[0]}"`, sameLength(x.slice(1), y.slice(1)));
  const rest = x.length - 1;
  const x0 = Number(x[0]);
  const y0 = Number(y[0]);
  if (/^0*$/.test(x.slice(1)) && /^9*$/.test(y.slice(1))) return join(digitClass(x0, y0), anyDigits(rest));
  const options: string[] = [join(`"${x0}"`, sameLength(x.slice(1), "9".repeat(rest)))];
  if (x0 + 1 <= y0 - 1) options.push(join(digitClass(x0 + 1, y0 - 1), anyDigits(rest)));
  options.push(join(`"${y0}"`, sameLength("0".repeat(rest), y.slice(1))));
  return alt(options);
}

/** Non-negative integers in [lo, hi] without leading zeros; hi may be Infinity. */
export function naturalRange(lo: number, hi: number): string | null {
  if (lo > hi) return null;
  const loDigits = String(lo).length;
  if (hi === Infinity) {
    // Same length as lo and at least lo, or any longer number.
    return alt([naturalRange(lo, 10 ** loDigits - 1)!, `[1-9] [0-9]{${loDigits},${MAX_DIGITS - 1}}`]);
  }
  const options: string[] = [];
  for (let d = loDigits; d <= String(hi).length; d++) {
    const from = Math.max(lo, d === 1 ? 0 : 10 ** (d - 1));
    const to = Math.min(hi, 10 ** d - 1);
    if (from > to) continue;
    options.push(d > 1 && from === 10 ** (d - 1) && to === 10 ** d - 1 ? join("[1-9]", anyDigits(d - 1)) : sameLength(String(from), String(to)));
  }
  return options.length ? alt(options) : null;
}

export interface Bounds {
  min?: number;
  max?: number;
  exclusiveMin?: boolean;
  exclusiveMax?: boolean;
}

/** Integers in the bounds, or null when the interval is empty or too large to express. */
export function integerRange(bounds: Bounds): string | null {
  let lo = bounds.min === undefined ? -Infinity : bounds.exclusiveMin ? Math.floor(bounds.min) + 1 : Math.ceil(bounds.min);
  let hi = bounds.max === undefined ? Infinity : bounds.exclusiveMax ? Math.ceil(bounds.max) - 1 : Math.floor(bounds.max);
  const limit = 10 ** MAX_DIGITS - 1;
  lo = Math.max(lo, -limit);
  hi = Math.min(hi, limit);
  if (lo > hi) return null;
  const options: string[] = [];
  if (lo < 0) {
    const negative = naturalRange(Math.max(1, -hi), -lo);
    if (negative) options.push(`"-" ${negative.includes(" ") && !negative.startsWith("(") ? `(${negative})` : negative}`);
  }
  if (hi >= 0) {
    const positive = naturalRange(Math.max(0, lo), hi === limit ? Infinity : hi);
    if (positive) options.push(positive);
  }
  return options.length ? alt(options) : null;
}

const FRACTION = '("." [0-9]{1,6})';

/**
 * Numbers in the bounds, for bounds that are integers (the usual 0, 1, 100, -90…90). Returns null
 * for fractional bounds; the caller then constrains less and validation decides.
 */
export function numberRange(bounds: Bounds): string | null {
  const { min, max } = bounds;
  if ((min !== undefined && !Number.isInteger(min)) || (max !== undefined && !Number.isInteger(max))) return null;
  const options: string[] = [];
  // Non-negative part: magnitudes in [a, b].
  const positive = magnitude(Math.max(0, min ?? -Infinity), !!bounds.exclusiveMin && (min ?? -1) >= 0, max ?? Infinity, !!bounds.exclusiveMax);
  if ((max ?? 0) >= 0 && positive) options.push(positive);
  if (min === undefined || min < 0) {
    // Negative part: -m with m in (max(0, -max), -min].
    const upper = min === undefined ? Infinity : -min;
    const lowerBound = max !== undefined && max < 0 ? -max : 0;
    const lowerExclusive = max !== undefined && max < 0 ? !!bounds.exclusiveMax : true;
    const negative = magnitude(lowerBound, lowerExclusive, upper, !!bounds.exclusiveMin);
    if (negative) options.push(`"-" ${negative}`);
  }
  return options.length ? alt(options) : null;
}

/** Decimal spellings of values v with a ≤ v ≤ b (or < per flags), a and b integers, a ≥ 0. */
function magnitude(a: number, aExclusive: boolean, b: number, bExclusive: boolean): string | null {
  if (a > b || (a === b && (aExclusive || bExclusive))) return null;
  const options: string[] = [];
  // Integer part i with a ≤ i < b, any fraction (a itself only with a non-zero fraction when exclusive).
  const firstFull = aExclusive ? a + 1 : a;
  const full = naturalRange(firstFull, b === Infinity ? Infinity : b - 1);
  if (full) options.push(`${full.includes(" ") && !full.startsWith("(") ? `(${full})` : full} ${FRACTION}?`);
  if (aExclusive && a < b) options.push(`"${a}" "." [0-9]{0,5} [1-9]`);
  if (!bExclusive && b !== Infinity) options.push(`"${b}"`);
  return options.length ? alt(options) : null;
}
