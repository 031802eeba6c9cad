import "server-only";
import { FORMATS } from "./formats";
import { jsonStringChar, MAX_REPEAT, repeat } from "./gbnf";
import type { GrammarBuilder } from "./grammar-builder";
import { type Schema } from "./keywords";
import { boundedPatternToGbnf, patternToGbnf, singleClassPattern } from "./regex";
import { VALIDATED_FORMATS } from "./vocabulary";

/** Strings: length, pattern (regex.ts) and format (formats.ts), and the counted repetition lengths are written with. */

/** Length ranges up to MAX_CHUNKS × MAX_REPEAT are written out exactly. */
const MAX_CHUNKS = 8;

export function stringRule(v: GrammarBuilder, schema: Schema, path: string, hint: string): string | null {
  const { format, pattern } = schema;
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  const max = typeof schema.maxLength === "number" ? schema.maxLength : undefined;
  if (max !== undefined && min > max) return null; // no string fits (and llama.cpp would hang on `{4,2}`)
  const hasLength = min > 0 || max !== undefined;
  let content: string | null = null;
  if (typeof pattern === "string") {
    const single = hasLength ? singleClassPattern(pattern) : null;
    if (single) {
      // `^[a-z0-9-]+$` with maxLength 64: one class, so the two counts intersect.
      const lo = Math.max(min, single.min);
      const hi = single.max === undefined ? max : max === undefined ? single.max : Math.min(max, single.max);
      if (hi !== undefined && lo > hi) return null;
      const char = jsonStringChar(single.ranges);
      if (char === null) return lo === 0 ? v.rule(hint, '"\\"\\""') : null;
      content = lengthRange(v, v.rule(`${hint}-char`, char), lo, hi, path) || "";
      if (typeof format === "string" && VALIDATED_FORMATS.has(format)) v.note(`format "${format}" with pattern`, path); // found by the grammar fuzzer
      return v.rule(hint, `"\\"" ${content ? `${content} ` : ""}"\\""`);
    }
    // The length counted along the pattern (regex.ts), else left to validation.
    const bounded = hasLength ? boundedPatternToGbnf(pattern, min, max) : null;
    if (bounded === "none") return null;
    content = bounded ?? patternToGbnf(pattern);
    if (content === null) v.note("pattern", path);
    else if (hasLength && bounded === null) v.note("minLength/maxLength with pattern", path);
  }
  if (content === null && typeof format === "string" && VALIDATED_FORMATS.has(format)) {
    content = FORMATS[format] ?? null;
    if (content === null) v.note(`format "${format}"`, path);
    else if (hasLength) v.note("minLength/maxLength with format", path);
  } else if (content !== null && typeof format === "string") v.note(`format "${format}" with pattern`, path);
  if (content === null) {
    if (min === 0 && max === undefined) return v.primitive("string");
    v.primitive("char");
    content = lengthRange(v, "char", min, max, path);
  }
  return v.rule(hint, `"\\"" ${content ? `${content} ` : ""}"\\""`);
}

/**
 * `item` repeated min..max times. llama.cpp enforces a repetition count up to 2000, so longer
 * ranges are written as consecutive chunks of at most that many. A maximum past MAX_CHUNKS of
 * them is written as MAX_CHUNKS chunks (a sound subset: `maxLength: 65535` lets a model write up
 * to 16,000 characters); a minimum past them is left to validation.
 */
function lengthRange(v: GrammarBuilder, item: string, min: number, max: number | undefined, path: string): string {
  const chunks = (n: number) => Math.ceil(n / MAX_REPEAT);
  if (chunks(min) > MAX_CHUNKS) {
    v.note("minLength", path);
    return repeat(item, MAX_REPEAT, undefined); // at least that many; the rest of the minimum is validated
  }
  if (max !== undefined && chunks(max) > MAX_CHUNKS) max = MAX_CHUNKS * MAX_REPEAT;
  const parts: string[] = [];
  let fixed = min;
  while (fixed > MAX_REPEAT) {
    parts.push(repeat(item, MAX_REPEAT, MAX_REPEAT));
    fixed -= MAX_REPEAT;
  }
  if (max === undefined) {
    parts.push(repeat(item, fixed, undefined));
    return parts.filter(Boolean).join(" ");
  }
  // Up to `n` more: a full chunk then the rest, or fewer than a chunk and stop. Unlike chunks
  // side by side, this has one way to split a string, so llama.cpp tracks few parse stacks.
  const upTo = (lo: number, n: number): string => {
    if (n <= MAX_REPEAT) return repeat(item, lo, n);
    const full = `${repeat(item, MAX_REPEAT, MAX_REPEAT)}${n > MAX_REPEAT ? ` ${upTo(0, n - MAX_REPEAT)}` : ""}`;
    return lo >= MAX_REPEAT ? full : `(${full} | ${repeat(item, lo, MAX_REPEAT - 1)})`;
  };
  parts.push(upTo(fixed, max - min + fixed));
  return parts.filter(Boolean).join(" ");
}

