import safeRegex from "safe-regex2";
import type { FieldError } from "../errors";
import type { Limits } from "../config/schema";
import { toPointer } from "./pointer";

export type SchemaLimits = Pick<Limits, "schemaBytes" | "schemaDepth" | "schemaProperties" | "schemaEnumValues">;

/** Keywords whose value is a map of name → subschema. */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);

/**
 * Browser-safe: the playground runs the same screening to lint the schema editor.
 *
 * Screens a caller's JSON Schema before anything compiles it: size, nesting, property and enum
 * counts, only local `$ref`s, no `$data`, and no regex that can backtrack catastrophically. Also
 * applies genserve's own rule for the top level. Returns every problem, with JSON Pointers under
 * `base` (the schema's place in the request body).
 */
export function screenSchema(schema: unknown, limits: SchemaLimits, base: readonly string[] = ["schema"], topLevelRule = true): FieldError[] {
  const at = (segments: readonly (string | number)[]) => toPointer([...base, ...segments]);
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    return [{ path: at([]), message: "must be a JSON Schema object" }];
  }
  const bytes = new TextEncoder().encode(JSON.stringify(schema)).byteLength;
  if (bytes > limits.schemaBytes) {
    return [{ path: at([]), message: `is ${bytes} bytes; the limit is ${limits.schemaBytes} bytes (limits.schemaBytes)` }];
  }

  const errors: FieldError[] = [];
  let properties = 0;
  let enumValues = 0;
  let depthReported = false;

  // Depth counts nested schema objects (a property's schema is one level below its parent's), not
  // JSON brackets: `properties`, `$defs` and arrays such as `anyOf` add no level of their own.
  const visit = (node: unknown, segments: (string | number)[], depth: number): void => {
    if (node === null || typeof node !== "object" || depthReported) return;
    if (Array.isArray(node)) {
      node.forEach((item, i) => visit(item, [...segments, i], depth));
      return;
    }
    const record = node as Record<string, unknown>;
    const parentKey = segments[segments.length - 1];
    const isSchemaMap = typeof parentKey === "string" && SCHEMA_MAPS.has(parentKey);
    const level = isSchemaMap ? depth : depth + 1;
    if (level > limits.schemaDepth) {
      errors.push({ path: at(segments), message: `nesting is deeper than ${limits.schemaDepth} levels (limits.schemaDepth)` });
      depthReported = true;
      return;
    }
    if (!isSchemaMap) {
      if ("$data" in record) errors.push({ path: at([...segments, "$data"]), message: "$data references are not supported" });
      for (const refKey of ["$ref", "$dynamicRef", "$recursiveRef"] as const) {
        const ref = record[refKey];
        if (typeof ref === "string" && !ref.startsWith("#")) {
          errors.push({ path: at([...segments, refKey]), message: `only local references ("#/...") are allowed, not "${ref.slice(0, 100)}"` });
        }
      }
      if (typeof record.pattern === "string") checkPattern(record.pattern, [...segments, "pattern"]);
      if (record.patternProperties && typeof record.patternProperties === "object") {
        for (const key of Object.keys(record.patternProperties)) checkPattern(key, [...segments, "patternProperties", key]);
      }
      if (record.properties && typeof record.properties === "object" && !Array.isArray(record.properties)) {
        properties += Object.keys(record.properties).length;
      }
      if (Array.isArray(record.enum)) enumValues += record.enum.length;
    }
    for (const [key, value] of Object.entries(record)) visit(value, [...segments, key], level);
  };

  const checkPattern = (pattern: string, segments: (string | number)[]) => {
    try {
      new RegExp(pattern, "u");
    } catch {
      errors.push({ path: at(segments), message: "is not a valid regular expression" });
      return;
    }
    if (!safeRegex(pattern)) {
      errors.push({ path: at(segments), message: "regular expression may backtrack catastrophically; simplify nested quantifiers" });
    }
  };

  visit(schema, [], 0);
  if (properties > limits.schemaProperties) {
    errors.push({ path: at([]), message: `has ${properties} properties in total; the limit is ${limits.schemaProperties} (limits.schemaProperties)` });
  }
  if (enumValues > limits.schemaEnumValues) {
    errors.push({ path: at([]), message: `has ${enumValues} enum values in total; the limit is ${limits.schemaEnumValues} (limits.schemaEnumValues)` });
  }
  if (topLevelRule) errors.push(...checkTopLevel(schema as Record<string, unknown>, at));
  return errors;
}

/** genserve's rule: the top level is an object, an array, or a string with a non-empty enum. */
function checkTopLevel(schema: Record<string, unknown>, at: (s: (string | number)[]) => string): FieldError[] {
  const type = schema.type;
  if (type === "object" || type === "array") return [];
  if (type === "string") {
    if (!Array.isArray(schema.enum) || schema.enum.length === 0) {
      return [{ path: at(["enum"]), message: 'a top-level "string" schema must carry a non-empty enum' }];
    }
    return [];
  }
  if (type === undefined) return [{ path: at(["type"]), message: 'is required at the top level: "object", "array" or "string" (with enum)' }];
  return [{ path: at(["type"]), message: `must be "object", "array" or "string" (with enum) at the top level, not ${JSON.stringify(type)}` }];
}
