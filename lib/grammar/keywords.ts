import "server-only";
import { jsonEqual } from "../json/json-equal.mjs";
import { schemaRegExp } from "../regex/pattern-engine.mjs";
/**
 * What the compiler knows about single keywords, as plain functions: JSON types, numeric bounds
 * across drafts, checking literal values (enum/const candidates) against their sibling keywords.
 */

export type Schema = Record<string, unknown>;

export const isObject = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * A `properties` or `patternProperties` map as the validator reads it: ajv skips an entry named
 * `__proto__` (so a `__proto__` key in an instance counts as an additional property).
 */
export function schemaMap(map: unknown): Schema {
  if (!isObject(map)) return {};
  if (!Object.hasOwn(map, "__proto__")) return map;
  return Object.fromEntries(Object.entries(map).filter(([k]) => k !== "__proto__"));
}
export const jsonType = (v: unknown): string => (v === null ? "null" : Array.isArray(v) ? "array" : Number.isInteger(v) ? "integer" : typeof v);
export const typeMatches = (value: unknown, type: string) => {
  const t = jsonType(value);
  return t === type || (type === "number" && t === "integer");
};

export function numericBounds(schema: Schema) {
  const bounds: { min?: number; max?: number; exclusiveMin?: boolean; exclusiveMax?: boolean } = {};
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = schema;
  if (typeof minimum === "number") bounds.min = minimum;
  if (typeof maximum === "number") bounds.max = maximum;
  // draft-04 booleans, later drafts numbers
  if (exclusiveMinimum === true) bounds.exclusiveMin = true;
  if (exclusiveMaximum === true) bounds.exclusiveMax = true;
  if (typeof exclusiveMinimum === "number" && (bounds.min === undefined || exclusiveMinimum >= bounds.min)) {
    bounds.min = exclusiveMinimum;
    bounds.exclusiveMin = true;
  }
  if (typeof exclusiveMaximum === "number" && (bounds.max === undefined || exclusiveMaximum <= bounds.max)) {
    bounds.max = exclusiveMaximum;
    bounds.exclusiveMax = true;
  }
  return bounds;
}

/** Keywords `satisfiesLocally` checks on a literal value (enum/const candidates). */
export const LOCALLY_CHECKED = new Set(["type", "enum", "const", "minLength", "maxLength", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "minProperties", "maxProperties", "required"]);

/** Whether a literal value passes the keywords in LOCALLY_CHECKED (others are not looked at). */
export function satisfiesLocally(value: unknown, schema: Schema): boolean {
  const types = typeof schema.type === "string" ? [schema.type] : Array.isArray(schema.type) ? (schema.type as string[]) : null;
  if (types && !types.some((t) => typeMatches(value, t))) return false;
  if (Array.isArray(schema.enum) && !schema.enum.some((v) => jsonEqual(v, value))) return false;
  if ("const" in schema && !jsonEqual(schema.const, value)) return false;
  if (typeof value === "string") {
    const length = [...value].length;
    if (typeof schema.minLength === "number" && length < schema.minLength) return false;
    if (typeof schema.maxLength === "number" && length > schema.maxLength) return false;
    if (typeof schema.pattern === "string") {
      try {
        if (!schemaRegExp(schema.pattern).test(value)) return false;
      } catch {
        return false;
      }
    }
  }
  if (typeof value === "number") {
    const b = numericBounds(schema);
    if (b.min !== undefined && (b.exclusiveMin ? value <= b.min : value < b.min)) return false;
    if (b.max !== undefined && (b.exclusiveMax ? value >= b.max : value > b.max)) return false;
    if (typeof schema.multipleOf === "number" && !passesMultipleOf(value, schema.multipleOf)) return false;
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === "number" && value.length < schema.minItems) return false;
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems) return false;
  }
  if (isObject(value)) {
    const keys = Object.keys(value);
    if (typeof schema.minProperties === "number" && keys.length < schema.minProperties) return false;
    if (typeof schema.maxProperties === "number" && keys.length > schema.maxProperties) return false;
    if (Array.isArray(schema.required) && !schema.required.every((k) => typeof k === "string" && Object.hasOwn(value, k))) return false;
  }
  return true;
}

/**
 * `multipleOf` exactly as ajv decides it: the quotient must equal its own `parseInt`, which also
 * refuses quotients too large to print without an exponent (1e21 is not a multiple of 1 to ajv).
 */
export function passesMultipleOf(value: number, multipleOf: number): boolean {
  const quotient = value / multipleOf;
  return quotient === Number.parseInt(String(quotient), 10);
}

export function safeTest(pattern: string, text: string): boolean {
  try {
    return schemaRegExp(pattern).test(text);
  } catch {
    return true; // unknown: assume it matches, which only makes the result more cautious
  }
}
