import "server-only";
import { jsonEqual } from "../json/json-equal.mjs";
import { finiteValues } from "./finite-values";
import type { GrammarBuilder } from "./grammar-builder";
import { isObject, schemaMap, type Schema } from "./keywords";
import { merge } from "./references";
import { ANNOTATIONS } from "./vocabulary";

/** Keywords that apply a subschema on a condition: schema-valued dependencies, and if/then/else on a discriminator. */

/**
 * Schema-valued dependencies ("if a is present, the object must also match S"): S is applied
 * whether or not `a` is written, which satisfies the dependency either way (a sound subset, as
 * property dependencies are made required). Should that leave no value where the schema allows
 * one, the dependency is left to validation instead. Undefined when there are none.
 */
export function dependenciesRule(v: GrammarBuilder, schema: Schema, path: string, hint: string): string | null | undefined {
  const found: [string, string, unknown][] = [];
  for (const key of ["dependencies", "dependentSchemas"] as const) {
    const deps = schema[key];
    if (!isObject(deps)) continue;
    for (const [name, dep] of Object.entries(deps)) if (!Array.isArray(dep)) found.push([key, name, dep]);
  }
  if (found.length === 0) return undefined;
  const rest: Schema = { ...schema };
  delete rest.dependentSchemas;
  if (isObject(schema.dependencies)) {
    const arrays = Object.entries(schema.dependencies).filter(([, dep]) => Array.isArray(dep));
    if (arrays.length > 0) rest.dependencies = Object.fromEntries(arrays);
    else delete rest.dependencies;
  }
  // A property the grammar never writes triggers nothing: applied are the dependencies of keys
  // declared or required, then of those that applying them declares or requires, until none is
  // added. Where keys may come from elsewhere (a branch, a reference, a map's or a pattern's keys),
  // every dependency applies.
  const opaque = (node: Schema | boolean) =>
    !isObject(node) ||
    isObject(node.additionalProperties) ||
    "patternProperties" in node ||
    ["allOf", "anyOf", "oneOf", "$ref", "if", "then", "else", "dependencies", "dependentSchemas"].some((k) => k in node);
  const written = (node: Schema | boolean) =>
    isObject(node) ? new Set([...(isObject(node.properties) ? Object.keys(node.properties) : []), ...(Array.isArray(node.required) ? node.required.map(String) : [])]) : new Set<string>();
  const apply = (list: typeof found) => list.map(([, name, dep]) => (dep === false ? { properties: { [name]: false } } : (dep as Schema | boolean)));
  let triggered = opaque(rest) ? found : found.filter(([, name]) => written(rest).has(name));
  let merged = merge(v, [rest, ...apply(triggered)], path);
  for (;;) {
    const waiting = found.filter((f) => !triggered.includes(f));
    const names = written(merged);
    const more = opaque(merged) ? waiting : waiting.filter(([, name]) => names.has(name));
    if (more.length === 0) break;
    triggered = [...triggered, ...more];
    merged = merge(v, [rest, ...apply(triggered)], path);
  }
  if (triggered.length === 0) return v.visit(rest, path, hint);
  const expr = v.visit(merged, path, hint);
  if (expr !== null) return expr;
  for (const [key] of triggered) v.note(`${key} (schema)`, path);
  return v.visit(rest, path, hint);
}

/**
 * `if`/`then`/`else` on a discriminator (`if: {properties: {kind: {const: "a"}}, required: ["kind"]}`)
 * as two branches told apart by that key: the condition with `then`; and `else` with the key
 * absent (where the condition requires it) or holding one of its other known values. Each branch
 * is a sound subset (its values meet the condition, or fail it). Undefined for other conditions,
 * which are left to validation.
 */
export function conditionRule(v: GrammarBuilder, schema: Schema, path: string, hint: string): string | null | undefined {
  const { if: condition, then: whenTrue = true, else: whenFalse = true, ...base } = schema;
  if (!isObject(condition)) return undefined;
  const keywords = Object.keys(condition).filter((k) => !ANNOTATIONS.has(k));
  if (!keywords.every((k) => k === "properties" || k === "required" || (k === "type" && condition.type === "object"))) return undefined;
  const tested = Object.entries(schemaMap(condition.properties));
  if (tested.length !== 1 || Object.keys(condition.properties as Schema).length !== 1) return undefined;
  const [key, test] = tested[0]!;
  const values = isObject(test) ? (Object.hasOwn(test, "const") ? [test.const] : Array.isArray(test.enum) ? test.enum : undefined) : undefined;
  const required = Array.isArray(condition.required) ? condition.required : [];
  if (values === undefined || !required.every((r) => r === key)) return undefined;
  let fails: Schema | undefined;
  if (required.includes(key)) fails = { type: "object", properties: { [key]: false } };
  else {
    // The key written with a value the condition refuses: one of the schema's own known values for it.
    const declared = isObject(base.properties) && Object.hasOwn(base.properties, key) ? finiteValues(v, base.properties[key], path) : undefined;
    const others = declared?.filter((value) => !values.some((c) => jsonEqual(c, value)));
    if (others?.length) fails = { type: "object", properties: { [key]: { enum: others } }, required: [key] };
  }
  if (fails === undefined) return undefined;
  const options = [
    v.visit(merge(v, [base, condition, whenTrue as Schema | boolean], path), `${path}/then`, `${hint}-then`),
    v.visit(merge(v, [base, whenFalse as Schema | boolean, fails], path), `${path}/else`, `${hint}-else`),
  ].filter((expr): expr is string => expr !== null);
  return options.length ? v.rule(hint, options.join(" | ")) : null;
}

