import "server-only";
import { escapePointerSegment } from "../json/pointer";
import { literal, MAX_REPEAT, repeat } from "./gbnf";
import type { GrammarBuilder } from "./grammar-builder";
import { isObject, safeTest, schemaMap, type Schema } from "./keywords";
import { patternToGbnf } from "./regex";

/**
 * Objects: declared properties in declared order (optional ones really optional), required keys the
 * schema does not declare, maps of additionalProperties or patternProperties, property counts.
 */

type Entry = { key: string; value: string; required: boolean };

export function objectRule(v: GrammarBuilder, schema: Schema, path: string, hint: string): string | null {
  v.primitive("ws");
  const properties = schemaMap(schema.properties);
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  // "if a is present, b must be": writing b always satisfies it whatever a does.
  for (const key of ["dependentRequired", "dependencies"]) {
    const deps = schema[key];
    if (!isObject(deps)) continue;
    for (const [name, dep] of Object.entries(deps)) {
      if (Array.isArray(dep)) dep.forEach((d) => required.add(String(d)));
      else if (!Object.hasOwn(properties, name) && !required.has(name)) continue; // never written: nothing to satisfy
      else v.note(`${key} (schema)`, path);
    }
  }
  const additional = schema.additionalProperties;
  const entries: Entry[] = [];
  for (const [key, sub] of Object.entries(properties)) {
    const value = v.visit(sub, `${path}/properties/${escapePointerSegment(key)}`, `${hint}-${key}`);
    if (value === null) {
      if (required.has(key)) return null; // required but no value allowed
      continue; // `false`: the property must be absent, so it is never generated
    }
    entries.push({ key, value, required: required.has(key) });
  }
  for (const key of required) {
    if (Object.hasOwn(properties, key)) continue;
    const value = additional === false ? null : v.visit(isObject(additional) ? additional : true, `${path}/additionalProperties`, `${hint}-extra`);
    if (value === null) return null;
    entries.push({ key, value, required: true });
  }

  const minProperties = typeof schema.minProperties === "number" ? schema.minProperties : 0;
  const maxProperties = typeof schema.maxProperties === "number" ? schema.maxProperties : Infinity;
  if (minProperties > maxProperties) return null; // no object fits
  const requiredCount = entries.filter((e) => e.required).length;
  const patterns = Object.entries(schemaMap(schema.patternProperties));

  if (patterns.length) {
    // Declared keys are written as declared; a declared key that a pattern also matches would have
    // to satisfy both schemas, which is left to validation.
    const matches = (key: string) => patterns.some(([p]) => safeTest(p, key));
    if (entries.some((e) => matches(e.key))) v.note("patternProperties", path);
    if (!entries.length) {
      // Keys from the pattern, values from its schema (the first pattern, when there are several).
      const [pattern, sub] = patterns[0]!;
      if (patterns.length > 1) v.note("patternProperties (several patterns)", path);
      const keyBody = patternToGbnf(pattern);
      const value = keyBody === null ? null : v.visit(sub, `${path}/patternProperties/${escapePointerSegment(pattern)}`, `${hint}-value`);
      if (keyBody === null || value === null) {
        if (keyBody === null) v.note("patternProperties", path);
        if (minProperties > 0) v.note("minProperties", path);
        return v.rule(hint, '"{" ws "}"');
      }
      v.primitive("ws");
      const key = v.rule(`${hint}-key`, `"\\"" ${keyBody} "\\""`);
      return mapRule(v, hint, `${key} ":" ws ${value}`, minProperties, maxProperties, path);
    }
  }

  if (!Object.keys(properties).length && additional !== false && !patterns.length && requiredCount === 0) {
    // A map: any keys, values of the additionalProperties schema.
    const value = v.visit(isObject(additional) ? additional : true, `${path}/additionalProperties`, `${hint}-value`);
    if (value === null) return minProperties > 0 ? null : v.rule(hint, '"{" ws "}"'); // no key may appear (found by the grammar fuzzer)
    v.primitive("ws");
    v.primitive("string");
    return mapRule(v, hint, `string ":" ws ${value}`, minProperties, maxProperties, path);
  }
  return recordRule(v, hint, entries, minProperties, maxProperties, requiredCount, path);
}

/** `{ kv, kv, … }` with a count between min and max (repeated keys collapse when parsed). */
function mapRule(v: GrammarBuilder, hint: string, kvBody: string, minProperties: number, maxProperties: number, path: string): string {
  v.primitive("ws");
  const kv = v.rule(`${hint}-kv`, kvBody);
  const lo = Math.min(minProperties, MAX_REPEAT);
  const hi = maxProperties === Infinity || maxProperties > MAX_REPEAT ? undefined : maxProperties;
  if (minProperties > MAX_REPEAT || (maxProperties !== Infinity && maxProperties > MAX_REPEAT)) v.note("minProperties/maxProperties", path);
  // Repeated keys collapse when parsed, so only a minimum above one can come out short.
  if (minProperties > 1) v.note("minProperties (keys may repeat)", path);
  if (hi === 0) return v.rule(hint, '"{" ws "}"');
  const more = repeat(`("," ws ${kv})`, Math.max(0, lo - 1), hi === undefined ? undefined : hi - 1);
  const members = `${kv}${more ? ` ${more}` : ""}`;
  return v.rule(hint, `"{" ws ${lo > 0 ? members : `(${members})?`} "}"`);
}

/** Declared properties in declared order, optional ones really optional. */
function recordRule(v: GrammarBuilder, hint: string, entries: Entry[], minProperties: number, maxProperties: number, requiredCount: number, path: string): string | null {
  if (requiredCount > maxProperties) return null;
  // More properties than are declared would need undeclared ones: left to validation, like a minimum above the required.
  if (minProperties > requiredCount || maxProperties < entries.length) v.note("minProperties/maxProperties", path);
  v.primitive("ws");
  const kvs = entries.map((e) => ({ ...e, kv: `${literal(JSON.stringify(e.key))} ":" ws ${e.value}` }));
  if (!kvs.length) return v.rule(hint, '"{" ws "}"');
  // Declared order. tail(i): properties i.. after at least one was written (each preceded by ",").
  // head(i): properties i.. with none written yet: the first present one has no comma.
  let tail = "";
  const tails: string[] = [];
  for (let i = kvs.length - 1; i >= 1; i--) {
    const { kv, required } = kvs[i]!;
    const item = required ? `"," ws ${kv}` : `("," ws ${kv})?`;
    tail = tail ? v.rule(`${hint}-tail-${i}`, `${item} ${tail}`) : v.rule(`${hint}-tail-${i}`, item);
    tails[i] = tail;
  }
  let head: string | null = null;
  for (let i = kvs.length - 1; i >= 0; i--) {
    const { kv, required } = kvs[i]!;
    const withThis = `${kv}${tails[i + 1] ? ` ${tails[i + 1]}` : ""}`;
    head = v.rule(`${hint}-from-${i}`, required ? withThis : head === null ? `(${withThis})?` : `(${withThis} | ${head})`);
  }
  return v.rule(hint, `"{" ws ${head} "}"`);
}
