import "server-only";
import { jsonEqual } from "../json/json-equal.mjs";
import { decide } from "./decide";
import { literal } from "./gbnf";
import type { GrammarBuilder } from "./grammar-builder";
import { isObject, LOCALLY_CHECKED, satisfiesLocally, type Schema } from "./keywords";
import { resolve } from "./references";
import { ANNOTATIONS, UNEXPRESSED, VALIDATION_KEYWORDS } from "./vocabulary";

/** Schemas with a few known values (enum, const, boolean, null): the values themselves as the grammar. */

export function literalValue(value: unknown): string {
  return literal(JSON.stringify(value));
}

/**
 * An enum's or const's values that validate, each checked against every keyword beside it by the
 * validator's rules (decide.ts): exact whatever those keywords are (not, if/then/else,
 * uniqueItems, multipleOf…). Undefined when a verdict is uncertain; the usual path then applies.
 */
export function finiteDomain(v: GrammarBuilder, schema: Schema, hint: string): string | null | undefined {
  const values = Object.hasOwn(schema, "const") ? [schema.const] : Array.isArray(schema.enum) ? schema.enum : undefined;
  const kept = values && validValues(v, values, schema);
  if (!kept) return undefined;
  if (kept.length === 0) return null;
  return kept.length === 1 ? literalValue(kept[0]) : v.rule(hint, kept.map((value) => literalValue(value)).join(" | "));
}

/**
 * The values a schema allows when they are few and known exactly: an enum or const (filtered as in
 * finiteDomain), a boolean or null type, behind plain references. Undefined otherwise.
 */
export function finiteValues(v: GrammarBuilder, schema: unknown, path: string): unknown[] | undefined {
  let node = schema;
  for (let hops = 0; isObject(node) && typeof node.$ref === "string" && Object.keys(node).every((k) => k === "$ref" || ANNOTATIONS.has(k)); hops++) {
    const target = hops < 16 ? resolve(v, node.$ref, path) : null;
    if (target === null) return undefined;
    node = target;
  }
  if (node === false) return [];
  if (!isObject(node)) return undefined;
  const candidates = Object.hasOwn(node, "const") ? [node.const] : Array.isArray(node.enum) ? node.enum : node.type === "boolean" ? [false, true] : node.type === "null" ? [null] : undefined;
  return candidates && validValues(v, candidates, node);
}

/** The candidates that validate against `node` (decide.ts), without repeats; undefined when a verdict is uncertain. */
function validValues(v: GrammarBuilder, candidates: readonly unknown[], node: Schema): unknown[] | undefined {
  const kept: unknown[] = [];
  for (const value of candidates) {
    const verdict = decide(value, node, v.root);
    if (verdict === undefined) return undefined;
    if (verdict && !kept.some((k) => jsonEqual(k, value))) kept.push(value);
  }
  return kept;
}

/**
 * A const or enum whose verdicts finiteDomain could not settle: its values that pass the keywords
 * checked here (keywords.ts), the others noted. Undefined when the schema has neither.
 */
export function enumRule(v: GrammarBuilder, schema: Schema, path: string, hint: string): string | null | undefined {
  if ("const" in schema || Array.isArray(schema.enum)) {
    if (schema.uniqueItems === true) v.note("uniqueItems", path);
  }
  if ("const" in schema) {
    const others = Object.keys(schema).filter((k) => VALIDATION_KEYWORDS.has(k) && k !== "const" && !UNEXPRESSED.includes(k));
    const unchecked = others.filter((k) => !LOCALLY_CHECKED.has(k));
    if (unchecked.length) v.note(`${unchecked.join(", ")} beside const`, path);
    return satisfiesLocally(schema.const, schema) ? literalValue(schema.const) : null;
  }
  if (Array.isArray(schema.enum)) {
    // Values the other keywords refuse are dropped; keywords that cannot be checked here are noted.
    const others = Object.keys(schema).filter((k) => VALIDATION_KEYWORDS.has(k) && k !== "enum" && !UNEXPRESSED.includes(k));
    const unchecked = others.filter((k) => !LOCALLY_CHECKED.has(k));
    if (unchecked.length) v.note(`${unchecked.join(", ")} beside enum`, path);
    const values = schema.enum.filter((value) => satisfiesLocally(value, schema));
    if (!values.length) return null;
    return v.rule(hint, values.map((value) => literalValue(value)).join(" | "));
  }
  return undefined;
}
