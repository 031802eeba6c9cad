/**
 * Integer and number bounds as GBNF. Integer intervals become digit-range alternatives (the
 * construction regex tools use for numeric ranges); numbers become an integer part in range plus an
 * optional fraction, compared digit by digit with a fractional bound's own digits. Every output is in range; a few in-range spellings
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
 * Numbers in the bounds: null when none fits, undefined when the bounds cannot be written exactly
 * (a fractional bound with more than 5 fraction digits, an exponent, or an integer part of 10^8 or
 * more); the caller then constrains less and validation decides.
 */
export function numberRange(bounds: Bounds): string | null | undefined {
  const { min, max } = bounds;
  const integral = (min === undefined || Number.isInteger(min)) && (max === undefined || Number.isInteger(max));
  const magnitude = integral ? integerMagnitude : fractionalMagnitude;
  const options: string[] = [];
  // Non-negative part: magnitudes in [a, b].
  if ((max ?? 0) >= 0) {
    const positive = magnitude(Math.max(0, min ?? -Infinity), !!bounds.exclusiveMin && (min ?? -1) >= 0, max ?? Infinity, !!bounds.exclusiveMax);
    if (positive === undefined) return undefined;
    if (positive) options.push(positive);
  }
  if (min === undefined || min < 0) {
    // Negative part: -m with m in (max(0, -max), -min].
    const upper = min === undefined ? Infinity : -min;
    const lowerBound = max !== undefined && max < 0 ? -max : 0;
    const lowerExclusive = max !== undefined && max < 0 ? !!bounds.exclusiveMax : true;
    const negative = magnitude(lowerBound, lowerExclusive, upper, !!bounds.exclusiveMin);
    if (negative === undefined) return undefined;
    if (negative) options.push(`"-" ${negative}`);
  }
  return options.length ? alt(options) : null;
}

/** Decimal spellings of values v with a ≤ v ≤ b (or < per flags), a and b integers, a ≥ 0. */
function integerMagnitude(a: number, aExclusive: boolean, b: number, bExclusive: boolean): string | null {
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

/** Fraction digits and integer part a fractional bound may have for its range to be written exactly. */
const MAX_BOUND_FRACTION = 5;
const MAX_BOUND_INTEGER = 1e8;

/** A non-negative bound as decimal digits (from its shortest round-trip spelling); null past what is exact here. */
function decimal(x: number): { int: number; frac: string } | null {
  const text = String(x);
  if (/e/i.test(text)) return null;
  const [int = "0", frac = ""] = text.split(".");
  if (frac.length > MAX_BOUND_FRACTION || Number(int) >= MAX_BOUND_INTEGER) return null;
  return { int: Number(int), frac };
}

/** A fixed-length digit string plus (+1) or minus (-1) one in its last place; null when it would overflow or underflow. */
function step(digits: string, by: 1 | -1): string | null {
  const next = BigInt(digits) + BigInt(by);
  if (next < 0n) return null;
  const text = next.toString().padStart(digits.length, "0");
  return text.length > digits.length ? null : text;
}

/**
 * Fraction digits (1 to k of them) whose value, padded with zeros to k digits, lies in [from, to]
 * (both k digits): "5" and "50" for [50, 99], so values are written as a model would write them.
 */
function fractionDigits(from: string, to: string): string | null {
  const options: string[] = [];
  for (let j = 1; j <= from.length; j++) {
    // The j-digit strings whose padding is at least `from` start at its first j digits, one more if it goes on.
    const lo = /^0*$/.test(from.slice(j)) ? from.slice(0, j) : step(from.slice(0, j), 1);
    const hi = to.slice(0, j);
    if (lo !== null && lo <= hi) options.push(sameLength(lo, hi));
  }
  return options.length ? alt(options) : null;
}

/**
 * Decimal spellings of values v with a ≤ v ≤ b (or < per flags), a ≥ 0, where a bound has a
 * fraction. Every spelling written parses to a value in range: fractions are compared digit by digit
 * against the bounds' own digits (at most 5, one more for an exclusive bound), and integer parts stay
 * below 10^8, so no two decimals compared here round to the same double. Returns undefined when the
 * bounds are beyond that (a spelling with an exponent, more digits); null when no value fits.
 */
function fractionalMagnitude(a: number, aExclusive: boolean, b: number, bExclusive: boolean): string | null | undefined {
  if (a > b || (a === b && (aExclusive || bExclusive))) return null;
  const low = decimal(a);
  const high = b === Infinity ? { int: Infinity, frac: "" } : decimal(b);
  if (!low || !high) return undefined;
  const k = Math.max(low.frac.length, high.frac.length) + (aExclusive || bExclusive ? 1 : 0);
  const pad = (frac: string) => frac.padEnd(k, "0");
  // The smallest and largest fraction digits (k of them) allowed beside the bounds' integer parts.
  const lowFrac = low.frac ? (aExclusive ? step(pad(low.frac), 1) : pad(low.frac)) : null;
  const highFrac = high.frac ? (bExclusive ? step(pad(high.frac), -1) : pad(high.frac)) : null;
  if ((low.frac && lowFrac === null) || (high.frac && highFrac === null)) return undefined;
  const options: string[] = [];
  const int = (n: number) => `"${n}"`;
  if (low.int === high.int) {
    // Both fractional here (equal integer parts with an integer bound would be an integer range).
    const from = lowFrac ?? (aExclusive ? step("0".repeat(k), 1)! : "0".repeat(k));
    const to = highFrac ?? "9".repeat(k);
    const digits = from <= to ? fractionDigits(from, to) : null;
    if (digits === null) return null;
    options.push(join(int(low.int), '"."', digits));
    if (!low.frac && !aExclusive) options.push(int(low.int));
    return alt(options);
  }
  // The lower bound's integer part, with fractions from the bound's up.
  if (low.frac) options.push(join(int(low.int), '"."', fractionDigits(lowFrac!, "9".repeat(k))!));
  else if (aExclusive) options.push(`${int(low.int)} "." [0-9]{0,5} [1-9]`);
  // Whole integer parts strictly between, with any fraction.
  const first = low.frac || aExclusive ? low.int + 1 : low.int;
  const middle = naturalRange(first, high.int === Infinity ? Infinity : high.int - 1);
  if (middle) options.push(`${middle.includes(" ") && !middle.startsWith("(") ? `(${middle})` : middle} ${FRACTION}?`);
  // The upper bound's integer part, alone or with fractions up to the bound's.
  if (high.int !== Infinity) {
    if (high.frac) options.push(alt([int(high.int), join(int(high.int), '"."', fractionDigits("0".repeat(k), highFrac!)!)]));
    else if (!bExclusive) options.push(int(high.int));
  }
  return options.length ? alt(options) : null;
}
