import type { FieldError } from "../errors";
import type { Limits } from "../config/schema";
import { findTooDeep } from "../json/depth";
import { resolveLocalRef, toPointer } from "../json/pointer";
import { translatePattern } from "../regex/pattern-engine.mjs";

export type SchemaLimits = Pick<Limits, "schemaBytes" | "schemaDepth" | "schemaProperties" | "schemaEnumValues">;

/** Where a screened schema uses an older draft's keyword that later drafts read differently. */
export interface LegacyKeyword {
  /** `id` (draft-04's `$id`) or `definitions` (`$defs` before 2019-09). */
  keyword: "id" | "definitions";
  path: string;
}

export interface ScreenOptions {
  /** The schema's JSON text, when the caller has made it already (its size is measured on it). */
  json?: string;
  /** Where the schema sits in the request body (errors' paths start here). */
  base?: readonly string[];
  /** genserve's rule for the top level of a request's schema (not for subschemas). */
  topLevelRule?: boolean;
  /** Told of each pattern RE2 cannot run: the server has it analysed for ReDoS before it may run. */
  jsOnly?: (pattern: JsOnlyPattern) => void;
  /** Told of each older-draft keyword, for the warning a run records when the draft reads it differently. */
  legacy?: (found: LegacyKeyword) => void;
}

/** A pattern that RE2 cannot run (a back-reference, a lookaround, a count above 1,000), where it is, and why. */
export interface JsOnlyPattern {
  pattern: string;
  path: string;
  reason: string;
}

/**
 * Where subschemas live, by keyword (JSON Schema draft-04 to 2020-12). Everything else in a schema
 * object is data (`enum`, `const`, `default`, `examples`, `required`…) or an annotation: a property
 * *named* "properties" or "pattern" is a name, not a keyword.
 */
const SCHEMA_VALUE = new Set([
  "additionalItems",
  "additionalProperties",
  "contains",
  "contentSchema",
  "else",
  "if",
  "items",
  "not",
  "propertyNames",
  "then",
  "unevaluatedItems",
  "unevaluatedProperties",
]);
const SCHEMA_ARRAY = new Set(["allOf", "anyOf", "oneOf", "prefixItems", "items"]);
const SCHEMA_MAP = new Set(["$defs", "definitions", "dependentSchemas", "patternProperties", "properties"]);

type Segments = readonly (string | number)[];

interface Frame {
  node: Record<string, unknown>;
  segments: Segments;
  /** Schema nesting: a subschema is one level below the schema it sits in. */
  depth: number;
}

/**
 * Browser-safe: the playground runs the same screening to lint the schema editor.
 *
 * Screens a caller's JSON Schema before anything compiles it: size, nesting, property and enum
 * counts, only local `$ref`s, no `$data`, and only valid regular expressions. Also applies
 * genserve's own rule for the top level. Returns every problem, with JSON Pointers under `base`
 * (the schema's place in the request body).
 *
 * Patterns run on RE2 (linear time, see pattern-engine.mjs). The few that RE2 cannot run are
 * passed to `jsOnly`, if given: the server has them analysed for ReDoS before they may run on
 * JavaScript's engine. Older drafts' `id` and `definitions` are passed to `legacy`.
 *
 * The walk follows the keywords that hold subschemas, and the targets of local `$ref`s (which may
 * point anywhere in the document, and are compiled as schemas there). It is iterative and stops at
 * the depth limit, so no schema can exhaust the stack.
 */
export function screenSchema(schema: unknown, limits: SchemaLimits, options: ScreenOptions = {}): FieldError[] {
  const { base = ["schema"], topLevelRule = true, jsOnly, legacy } = options;
  const at = (segments: Segments) => toPointer([...base, ...segments]);
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    return [{ path: at([]), message: "must be a JSON Schema object" }];
  }
  // Raw nesting first (data inside enum or default included): everything after may recurse.
  const rawLimit = rawDepthLimit(limits);
  const tooDeep = findTooDeep(schema, rawLimit);
  if (tooDeep) return [{ path: at(tooDeep), message: `nests objects and arrays deeper than ${rawLimit} levels (from limits.schemaDepth)` }];
  const bytes = new TextEncoder().encode(options.json ?? JSON.stringify(schema)).byteLength;
  if (bytes > limits.schemaBytes) {
    return [{ path: at([]), message: `is ${bytes} bytes; the limit is ${limits.schemaBytes} bytes (limits.schemaBytes)` }];
  }

  const errors: FieldError[] = [];
  let properties = 0;
  let enumValues = 0;
  const root = schema as Record<string, unknown>;
  const seen = new Set<object>();
  const stack: Frame[] = [{ node: root, segments: [], depth: 1 }];

  const checkPattern = (pattern: string, segments: Segments) => {
    const translated = translatePattern(pattern);
    if (translated.ok) return;
    if (translated.invalid) errors.push({ path: at(segments), message: `is not a valid regular expression (${translated.reason})` });
    else jsOnly?.({ pattern, path: at(segments), reason: translated.reason });
  };

  const push = (value: unknown, segments: Segments, depth: number) => {
    // Boolean schemas (true/false) hold nothing to screen.
    if (value !== null && typeof value === "object" && !Array.isArray(value)) stack.push({ node: value as Record<string, unknown>, segments, depth });
  };

  const refTargets: { value: unknown; segments: Segments; depth: number }[] = [];
  while (stack.length > 0 || refTargets.length > 0) {
    if (stack.length === 0) {
      const next = refTargets.shift()!;
      push(next.value, next.segments, next.depth);
      continue;
    }
    const { node, segments, depth } = stack.pop()!;
    if (seen.has(node)) continue;
    seen.add(node);
    if (depth > limits.schemaDepth) {
      errors.push({ path: at(segments), message: `nesting is deeper than ${limits.schemaDepth} levels (limits.schemaDepth)` });
      break;
    }
    if ("$data" in node) errors.push({ path: at([...segments, "$data"]), message: "$data references are not supported" });
    for (const refKey of ["$ref", "$dynamicRef", "$recursiveRef"] as const) {
      const ref = node[refKey];
      if (typeof ref !== "string") continue;
      if (!ref.startsWith("#")) {
        errors.push({ path: at([...segments, refKey]), message: `only local references ("#/...") are allowed, not "${ref.slice(0, 100)}"` });
        continue;
      }
      // A pointer may land anywhere in the document (inside `default`, or an unknown keyword):
      // whatever it lands on is compiled as a schema, so it is screened as one.
      // Targets are screened after the keyword walk, so that one reached through keywords keeps its depth.
      const target = resolveLocalRef(root, ref);
      if (target) refTargets.push({ value: target.value, segments: target.segments, depth: depth + 1 });
    }
    if (typeof node.pattern === "string") checkPattern(node.pattern, [...segments, "pattern"]);
    // genserve's own annotation (README: Source grounding): the values here must be found in the run's sources.
    if ("x-grounded" in node && typeof node["x-grounded"] !== "boolean") errors.push({ path: at([...segments, "x-grounded"]), message: "must be true or false" });
    if (typeof node.id === "string") legacy?.({ keyword: "id", path: at([...segments, "id"]) });
    if (isRecord(node.definitions)) legacy?.({ keyword: "definitions", path: at([...segments, "definitions"]) });
    if (node.properties && typeof node.properties === "object" && !Array.isArray(node.properties)) properties += Object.keys(node.properties).length;
    if (Array.isArray(node.enum)) enumValues += node.enum.length;

    for (const [keyword, value] of Object.entries(node)) {
      if (value === null || typeof value !== "object") continue;
      // ajv's $data form of a keyword's value ({"const": {"$data": "1/b"}}): not enabled, so refused
      // rather than silently taken as a literal.
      if (!Array.isArray(value) && "$data" in value && !SCHEMA_VALUE.has(keyword) && !SCHEMA_MAP.has(keyword)) {
        errors.push({ path: at([...segments, keyword, "$data"]), message: "$data references are not supported" });
        continue;
      }
      if (SCHEMA_ARRAY.has(keyword) && Array.isArray(value)) {
        value.forEach((sub, i) => push(sub, [...segments, keyword, i], depth + 1));
      } else if (SCHEMA_VALUE.has(keyword)) {
        push(value, [...segments, keyword], depth + 1);
      } else if (SCHEMA_MAP.has(keyword) && !Array.isArray(value)) {
        for (const [name, sub] of Object.entries(value)) {
          if (keyword === "patternProperties") checkPattern(name, [...segments, keyword, name]);
          push(sub, [...segments, keyword, name], depth + 1);
        }
      } else if (keyword === "dependencies" && !Array.isArray(value)) {
        // draft-04 to 07: each value is a schema, or a list of property names.
        for (const [name, sub] of Object.entries(value)) if (!Array.isArray(sub)) push(sub, [...segments, keyword, name], depth + 1);
      }
    }
  }

  if (properties > limits.schemaProperties) {
    errors.push({ path: at([]), message: `has ${properties} properties in total; the limit is ${limits.schemaProperties} (limits.schemaProperties)` });
  }
  if (enumValues > limits.schemaEnumValues) {
    errors.push({ path: at([]), message: `has ${enumValues} enum values in total; the limit is ${limits.schemaEnumValues} (limits.schemaEnumValues)` });
  }
  if (topLevelRule) errors.push(...checkTopLevel(root, at));
  return errors;
}

/**
 * JSON nesting allowed inside a schema: each schema level may add a map (`properties`) or an array
 * (`anyOf`) around its subschemas, and data (`enum`, `default`) may nest a little more.
 */
const rawDepthLimit = (limits: SchemaLimits) => Math.max(64, limits.schemaDepth * 4 + 16);

/** genserve's rule: the top level is an object, an array, or a string with a non-empty enum. */
function checkTopLevel(schema: Record<string, unknown>, at: (s: Segments) => string): FieldError[] {
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

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);
