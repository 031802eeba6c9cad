import "server-only";
import { RE2JS } from "re2js";
import type { CheckResult, Expectation } from "../api/suite-shapes";
import type { GroundedLeaf } from "../domain/grounding";
import { jsonEqual } from "../json/json-equal.mjs";
import { parsePointer } from "../json/pointer";

/**
 * Expectations on the fields of an output, checked deterministically: each check of each field is
 * a result of its own (with the value it saw and why it failed). `judge` checks are not decided
 * here: they are handed back for a judge workflow to decide (lib/evals/runner.ts).
 */

const DEFAULT_TOLERANCE = 1e-9;

export type Lookup = { found: true; value: unknown } | { found: false };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const ARRAY_INDEX = /^(0|[1-9]\d*)$/;

/** The value a JSON Pointer names in `doc`, following own keys and array indexes only. */
export function lookup(doc: unknown, pointer: string): Lookup {
  let value = doc;
  for (const token of parsePointer(pointer)) {
    if (Array.isArray(value)) {
      if (!ARRAY_INDEX.test(token) || Number(token) >= value.length) return { found: false };
      value = value[Number(token)];
    } else if (isObject(value) && Object.prototype.hasOwnProperty.call(value, token)) {
      value = value[token];
    } else {
      return { found: false };
    }
  }
  return { found: true, value };
}

/**
 * `actual` matches `expected`: deep equality (numbers by value), where with `partial` an expected
 * object needs only its own keys (at any depth), and with `unordered` arrays match in any order.
 */
export function matches(actual: unknown, expected: unknown, options: { partial?: boolean; unordered?: boolean }): boolean {
  if (isObject(expected)) {
    if (!isObject(actual)) return false;
    const keys = Object.keys(expected);
    if (!options.partial && Object.keys(actual).length !== keys.length) return false;
    return keys.every((k) => Object.prototype.hasOwnProperty.call(actual, k) && matches(actual[k], expected[k], options));
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return false;
    if (!options.unordered) return expected.every((e, i) => matches(actual[i], e, options));
    // Whole values in any order: equal as multisets, in O(n log n) whatever their size.
    if (!options.partial) return unorderedKey(actual) === unorderedKey(expected);
    // Subsets in any order need a pairing (quadratic): bounded, so an output cannot stall the server.
    if (expected.length > MAX_PAIRED) return false;
    return perfectMatching(expected, actual, (e, a) => matches(a, e, options));
  }
  return jsonEqual(actual, expected);
}

/** Items of arrays compared as subsets in any order, at most (`partial` with `unordered`). */
export const MAX_PAIRED = 200;

/** A value's text with object keys sorted and array items sorted at every depth: equal exactly when equal in any order. */
function unorderedKey(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(unorderedKey).sort().join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${unorderedKey((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** Whether every expected item can be paired with its own actual item (Kuhn's augmenting paths). */
function perfectMatching(expected: readonly unknown[], actual: readonly unknown[], fits: (e: unknown, a: unknown) => boolean): boolean {
  const edges = expected.map((e) => actual.flatMap((a, j) => (fits(e, a) ? [j] : [])));
  const owner = new Array<number>(actual.length).fill(-1);
  const augment = (i: number, seen: boolean[]): boolean => {
    for (const j of edges[i]!) {
      if (seen[j]) continue;
      seen[j] = true;
      if (owner[j] === -1 || augment(owner[j]!, seen)) {
        owner[j] = i;
        return true;
      }
    }
    return false;
  };
  return expected.every((_, i) => augment(i, new Array<boolean>(actual.length).fill(false)));
}

const compiled = new Map<string, RE2JS>();
/** A `matches` pattern on RE2 (linear time); throws RE2's syntax error for a bad one. */
export function compilePattern(source: string): RE2JS {
  let regex = compiled.get(source);
  if (!regex) {
    regex = RE2JS.compile(source);
    if (compiled.size > 1000) compiled.clear();
    compiled.set(source, regex);
  }
  return regex;
}

const show = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
};

const typeOf = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

function sizeOf(value: unknown): number | null {
  if (typeof value === "string") return [...value].length;
  if (Array.isArray(value)) return value.length;
  if (isObject(value)) return Object.keys(value).length;
  return null;
}

/** The most items of any array in a value, at any depth. */
function largestArray(value: unknown): number {
  let most = Array.isArray(value) ? value.length : 0;
  const children = Array.isArray(value) ? value : isObject(value) ? Object.values(value) : [];
  for (const child of children) most = Math.max(most, largestArray(child));
  return most;
}

export interface PendingJudge {
  path: string;
  criterion: string;
  /** The judge workflow named by the expectation; undefined: the suite's. */
  workflow?: string;
  field: Lookup;
}

/** Every deterministic check of every field, and the judge checks left to decide. */
export function checkOutput(output: unknown, expect: Readonly<Record<string, Expectation>>, grounding?: readonly GroundedLeaf[]): { checks: CheckResult[]; judges: PendingJudge[] } {
  const checks: CheckResult[] = [];
  const judges: PendingJudge[] = [];
  for (const [path, expectation] of Object.entries(expect)) {
    const field = lookup(output, path);
    checks.push(...checkField(path, field, expectation, grounding));
    if (expectation.judge !== undefined) {
      const spec = typeof expectation.judge === "string" ? { criterion: expectation.judge } : expectation.judge;
      judges.push({ path, criterion: spec.criterion, workflow: spec.workflow, field });
    }
  }
  return { checks, judges };
}

/** The deterministic checks of one field (all but judge), in the order of CHECK_KINDS. */
export function checkField(path: string, field: Lookup, e: Expectation, grounding?: readonly GroundedLeaf[]): CheckResult[] {
  const out: CheckResult[] = [];
  const actual = field.found ? { actual: field.value } : {};
  const result = (check: CheckResult["check"], expected: unknown, failure: string | null): void => {
    out.push({ path, check, pass: failure === null, expected, ...actual, ...(failure !== null && { reason: failure }) });
  };
  const has = (key: keyof Expectation) => Object.prototype.hasOwnProperty.call(e, key) && e[key] !== undefined;
  const missing = "is missing";

  if (has("equals")) {
    const options = { partial: e.partial, unordered: e.unordered };
    const tooMany = e.partial && e.unordered && largestArray(e.equals) > MAX_PAIRED;
    result(
      "equals",
      e.equals,
      !field.found
        ? missing
        : tooMany
          ? `arrays of more than ${MAX_PAIRED} items are not compared as subsets in any order; drop partial or unordered`
          : matches(field.value, e.equals, options)
            ? null
            : `expected ${show(e.equals)}${e.partial ? " (subset)" : ""}${e.unordered ? " (any order)" : ""}, got ${show(field.value)}`,
    );
  }
  if (has("oneOf")) {
    const options = e.oneOf!;
    result("oneOf", options, !field.found ? missing : options.some((o) => jsonEqual(field.value, o)) ? null : `expected one of ${show(options)}, got ${show(field.value)}`);
  }
  if (has("approx")) {
    const tolerance = e.tolerance ?? DEFAULT_TOLERANCE;
    const expected = { approx: e.approx, tolerance };
    if (!field.found) result("approx", expected, missing);
    else if (typeof field.value !== "number") result("approx", expected, `expected a number, got ${typeOf(field.value)}`);
    else result("approx", expected, Math.abs(field.value - e.approx!) <= tolerance ? null : `expected ${e.approx} ± ${tolerance}, got ${field.value}`);
  }
  for (const bound of ["min", "max"] as const) {
    if (!has(bound)) continue;
    const limit = e[bound]!;
    if (!field.found) result(bound, limit, missing);
    else if (typeof field.value !== "number") result(bound, limit, `expected a number, got ${typeOf(field.value)}`);
    else result(bound, limit, (bound === "min" ? field.value >= limit : field.value <= limit) ? null : `expected ${bound === "min" ? "at least" : "at most"} ${limit}, got ${field.value}`);
  }
  if (has("length")) {
    const want = typeof e.length === "number" ? { min: e.length, max: e.length } : e.length!;
    const size = field.found ? sizeOf(field.value) : null;
    const range = want.min === want.max ? `${want.min}` : `${want.min ?? 0}-${want.max ?? "∞"}`;
    if (!field.found) result("length", e.length, missing);
    else if (size === null) result("length", e.length, `expected a string, array or object, got ${typeOf(field.value)}`);
    else result("length", e.length, (want.min === undefined || size >= want.min) && (want.max === undefined || size <= want.max) ? null : `expected length ${range}, got ${size}`);
  }
  if (has("matches")) {
    if (!field.found) result("matches", e.matches, missing);
    else if (typeof field.value !== "string") result("matches", e.matches, `expected a string, got ${typeOf(field.value)}`);
    else result("matches", e.matches, compilePattern(e.matches!).matcher(field.value).find() ? null : `does not match /${e.matches}/: ${show(field.value)}`);
  }
  if (has("contains")) {
    const want = e.contains;
    if (!field.found) result("contains", want, missing);
    else if (typeof field.value === "string" && typeof want === "string") result("contains", want, field.value.includes(want) ? null : `does not contain ${show(want)}: ${show(field.value)}`);
    else if (Array.isArray(field.value)) result("contains", want, field.value.some((item) => matches(item, want, { partial: true })) ? null : `no item matches ${show(want)}`);
    else result("contains", want, `expected a string (with a string to find) or an array, got ${typeOf(field.value)}`);
  }
  if (has("absent")) result("absent", true, field.found ? `is present: ${show(field.value)}` : null);
  if (has("present")) result("present", true, field.found ? null : missing);
  if (has("grounded")) result("grounded", true, !field.found ? missing : groundedFailure(path, grounding));
  return out;
}

/** Why the values at or under `path` are not all grounded, or null when they are. */
export function groundedFailure(path: string, grounding: readonly GroundedLeaf[] | undefined): string | null {
  if (!grounding) return "the run reported no grounding";
  const under = grounding.filter((leaf) => leaf.pointer === path || leaf.pointer.startsWith(`${path}/`) || path === "");
  if (under.length === 0) return "has no string, number or boolean values to ground";
  const missed = under.filter((leaf) => leaf.match === "none");
  if (missed.length === 0) return null;
  return `not found in the input or attachments: ${missed.slice(0, 5).map((leaf) => `${leaf.pointer} (${leaf.reason ?? "not_found"})`).join(", ")}${missed.length > 5 ? ` and ${missed.length - 5} more` : ""}`;
}
