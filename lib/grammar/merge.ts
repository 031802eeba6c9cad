import "server-only";
import { isObject, type Schema } from "./keywords";
import { ANNOTATIONS } from "./vocabulary";
import { setOwn } from "../json/own";

/** Branches an allOf of two anyOfs may expand into. */
const MAX_PRODUCT = 64;

/**
 * allOf semantics for the keywords the grammar uses: the parts merged into one schema (false when
 * they contradict). What it cannot merge is reported through `note`, for validation to decide.
 */
export function mergeAllOf(parts: (Schema | boolean)[], note: (keyword: string) => void): Schema | boolean {
  if (parts.some((p) => p === false)) return false;
  const schemas = parts.filter((p): p is Schema => p !== true);
  const objectKeys = mergeObjectKeys(schemas, note);
  const arrayKeys = mergeArrayKeys(schemas);
  const out: Schema = {};
  for (const part of schemas) {
    for (const [key, value] of Object.entries(part)) {
      if (objectKeys && (key === "properties" || key === "additionalProperties")) continue;
      if (arrayKeys && (key === "prefixItems" || key === "items" || key === "additionalItems")) continue;
      if (!Object.hasOwn(out, key)) {
        setOwn(out, key, value);
        continue;
      }
      const current = out[key];
      if (JSON.stringify(current) === JSON.stringify(value)) continue;
      switch (key) {
        case "properties": {
          const merged: Schema = { ...(current as Schema) };
          for (const [name, sub] of Object.entries(value as Schema)) setOwn(merged, name, Object.hasOwn(merged, name) ? { allOf: [merged[name], sub] } : sub);
          out.properties = merged;
          break;
        }
        case "required":
          out.required = [...new Set([...(current as string[]), ...(value as string[])])];
          break;
        case "type": {
          const a = ([] as string[]).concat(current as string[]);
          const b = ([] as string[]).concat(value as string[]);
          const both = a.flatMap((t) => b.filter((u) => u === t || (t === "number" && u === "integer")).concat(b.includes("number") && t === "integer" ? ["integer"] : []));
          out.type = [...new Set(both)];
          if (!both.length) return false;
          break;
        }
        case "minimum":
        case "minLength":
        case "minItems":
        case "minProperties":
          out[key] = Math.max(current as number, value as number);
          break;
        case "maximum":
        case "maxLength":
        case "maxItems":
        case "maxProperties":
          out[key] = Math.min(current as number, value as number);
          break;
        case "enum":
          out.enum = (current as unknown[]).filter((v) => (value as unknown[]).some((w) => JSON.stringify(w) === JSON.stringify(v)));
          break;
        case "additionalProperties":
          out.additionalProperties = current === false || value === false ? false : { allOf: [current, value] };
          break;
        case "items":
          out.items = isObject(current) && isObject(value) ? { allOf: [current, value] } : current;
          if (!(isObject(current) && isObject(value))) note("items in allOf");
          break;
        case "allOf":
          out.allOf = [...(current as unknown[]), ...(value as unknown[])];
          break;
        case "anyOf":
        case "oneOf": {
          // (a1 | a2) and (b1 | b2) = (a1 and b1) | (a1 and b2) | …, while that stays small.
          const left = current as unknown[];
          const right = value as unknown[];
          if (left.length * right.length <= MAX_PRODUCT) out[key] = left.flatMap((a) => right.map((b) => ({ allOf: [a, b] })));
          else note(`${key} in allOf`);
          if (key === "oneOf") note("oneOf in allOf");
          break;
        }
        default:
          if (!ANNOTATIONS.has(key)) note(`${key} in allOf`);
      }
    }
  }
  if (objectKeys) Object.assign(out, objectKeys);
  if (arrayKeys) Object.assign(out, arrayKeys);
  return out;
}

/**
 * `properties` and `additionalProperties` of several parts, merged as allOf means them: a part's
 * additionalProperties governs every key it does not declare, including keys another part
 * declares, so `{properties: {a}}` and `{additionalProperties: false}` together allow no key at
 * all. Undefined when at most one part has either keyword (nothing to merge).
 */
function mergeObjectKeys(parts: Schema[], note: (keyword: string) => void): Schema | undefined {
  const objectParts = parts.filter((p) => p.properties !== undefined || p.additionalProperties !== undefined);
  if (objectParts.length < 2) return undefined;
  if (objectParts.some((p) => p.patternProperties !== undefined)) note("patternProperties in allOf"); // which keys they govern is left to validation
  const propertiesOf = (p: Schema) => (isObject(p.properties) ? p.properties : {});
  const names = [...new Set(objectParts.flatMap((p) => Object.keys(propertiesOf(p))))];
  const properties: Schema = {};
  for (const name of names) {
    const constraints = objectParts.map((p) => (Object.hasOwn(propertiesOf(p), name) ? propertiesOf(p)[name] : (p.additionalProperties ?? true))).filter((c) => c !== true);
    setOwn(properties, name, allOfSchemas(constraints));
  }
  const additional = objectParts.map((p) => p.additionalProperties ?? true).filter((c) => c !== true);
  const result: Schema = { properties };
  if (additional.length > 0) result.additionalProperties = allOfSchemas(additional);
  return result;
}

/** Subschemas that must all hold, as one: `false` if any is, `true` if none constrains, else an allOf. */
function allOfSchemas(constraints: unknown[]): unknown {
  const kept = constraints.filter((c) => c !== true);
  return kept.includes(false) ? false : kept.length === 0 ? true : kept.length === 1 ? kept[0] : { allOf: kept };
}

/**
 * `prefixItems` and `items` (or draft-07's array `items` and `additionalItems`) of several parts,
 * merged by position: one part's rest schema also governs the positions another part's tuple
 * describes. Undefined when at most one part has these keywords, or no part has a tuple (then
 * `items` merges as a plain allOf).
 */
function mergeArrayKeys(parts: Schema[]): Schema | undefined {
  const arrayParts = parts
    .filter((p) => p.prefixItems !== undefined || p.items !== undefined || p.additionalItems !== undefined)
    .map((p) => {
      if (Array.isArray(p.prefixItems)) return { prefix: p.prefixItems as unknown[], rest: p.items ?? true };
      if (Array.isArray(p.items)) return { prefix: p.items as unknown[], rest: p.additionalItems ?? true };
      return { prefix: [] as unknown[], rest: p.items ?? true };
    });
  if (arrayParts.length < 2 || arrayParts.every((p) => p.prefix.length === 0)) return undefined;
  const length = Math.max(...arrayParts.map((p) => p.prefix.length));
  const prefixItems = Array.from({ length }, (_, i) => allOfSchemas(arrayParts.map((p) => (i < p.prefix.length ? p.prefix[i] : p.rest))));
  return { prefixItems, items: allOfSchemas(arrayParts.map((p) => p.rest)) };
}
