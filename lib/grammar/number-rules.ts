import "server-only";
import type { GrammarBuilder } from "./grammar-builder";
import { numericBounds, type Schema } from "./keywords";
import { integerRange, numberRange } from "./numbers";

/** Integers and numbers: bounds written digit by digit (numbers.ts), the int32/int64 formats. */

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

export function numberRule(v: GrammarBuilder, declared: string, schema: Schema, path: string, hint: string): string | null {
  const bounds = numericBounds(schema);
  // The validator checks the numeric formats too (ajv-formats): int64 is any integer, int32 one in
  // 32 bits (found by the grammar fuzzer: a 13-digit integer under "format": "int32").
  const type = schema.format === "int32" || schema.format === "int64" ? "integer" : declared;
  if (schema.format === "int32") {
    if (bounds.min === undefined || bounds.min < INT32_MIN) Object.assign(bounds, { min: INT32_MIN, exclusiveMin: false });
    if (bounds.max === undefined || bounds.max > INT32_MAX) Object.assign(bounds, { max: INT32_MAX, exclusiveMax: false });
  }
  const { multipleOf } = schema;
  if (multipleOf !== undefined && !(type === "integer" && multipleOf === 1)) v.note("multipleOf", path);
  const bounded = bounds.min !== undefined || bounds.max !== undefined;
  if (!bounded) return v.primitive(type);
  const expr = type === "integer" ? integerRange(bounds) : numberRange(bounds);
  if (expr === undefined) {
    // Bounds too fine to write digit by digit: leave them to validation.
    v.note("fractional minimum/maximum", path);
    return v.primitive(type);
  }
  if (expr === null) return null;
  return v.rule(hint, expr);
}
