import "server-only";
import { isObject, jsonType, type Schema } from "./keywords";

/** What the grammar compiler knows of JSON Schema's vocabulary: primitives, keyword tables, types. */

export const PRIMITIVES: Record<string, string> = {
  ws: '| " " | "\\n" [ \\t]{0,20}',
  char: '[^"\\\\\\x00-\\x1f] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4})',
  string: '"\\"" char* "\\""',
  integer: '"-"? ("0" | [1-9] [0-9]{0,15})',
  number: '"-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,2})?',
  boolean: '"true" | "false"',
  null: '"null"',
  value: "object | array | string | number | boolean | null",
  object: '"{" ws (string ":" ws value ("," ws string ":" ws value)*)? "}"',
  array: '"[" ws (value ("," ws value)*)? "]"',
};
export const PRIMITIVE_DEPS: Record<string, string[]> = {
  string: ["char"],
  value: ["object", "array", "string", "number", "boolean", "null"],
  object: ["ws", "string", "value"],
  array: ["ws", "value"],
};

export const TYPE_KEYWORDS: Record<string, string[]> = {
  object: ["properties", "required", "additionalProperties", "patternProperties", "minProperties", "maxProperties", "propertyNames", "dependentRequired", "dependentSchemas", "dependencies", "unevaluatedProperties"],
  array: ["items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains", "unevaluatedItems"],
  string: ["minLength", "maxLength", "pattern", "format"],
  number: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"],
};
export const ALL_TYPES = ["object", "array", "string", "number", "integer", "boolean", "null"];
/** Keywords that never constrain the value. */
export const ANNOTATIONS = new Set(["$schema", "$id", "id", "title", "description", "default", "examples", "example", "$comment", "deprecated", "readOnly", "writeOnly", "$defs", "definitions", "$anchor", "$dynamicAnchor", "contentMediaType", "contentEncoding", "nullable", "discriminator", "xml", "externalDocs", "strict"]);
/** Keywords that constrain a value in some draft; anything else is ignored by the validator too. */
export const VALIDATION_KEYWORDS = new Set([
  ...Object.values(TYPE_KEYWORDS).flat(),
  "type", "enum", "const", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "$ref", "$dynamicRef", "$recursiveRef",
  "minContains", "maxContains",
]);
/** Keywords left to validation wherever they appear (GBNF has no way to say them). */
export const UNEXPRESSED = ["not", "if", "then", "else", "uniqueItems", "contains", "minContains", "maxContains", "propertyNames", "dependentSchemas", "unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef"];

/**
 * Formats the validator checks (ajv-formats). Any other format name is an annotation to it, so it
 * constrains nothing and needs no grammar.
 */
export const VALIDATED_FORMATS = new Set(["date", "time", "date-time", "iso-time", "iso-date-time", "duration", "uri", "uri-reference", "uri-template", "url", "email", "hostname", "ipv4", "ipv6", "regex", "uuid", "json-pointer", "json-pointer-uri-fragment", "relative-json-pointer", "byte", "int32", "int64", "float", "double"]);

export function declaredTypes(schema: Schema): string[] | null {
  if (typeof schema.type === "string") return [schema.type];
  if (Array.isArray(schema.type)) return schema.type.filter((t): t is string => typeof t === "string");
  return null;
}

export function inferredTypes(schema: Schema): string[] | null {
  const found = Object.entries(TYPE_KEYWORDS)
    .filter(([, keywords]) => keywords.some((k) => k in schema))
    .map(([type]) => type);
  return found.length ? found : null;
}

/** The JSON types a schema can produce. */
export function possibleTypes(schema: Schema | boolean): string[] {
  if (!isObject(schema)) return schema ? ALL_TYPES : [];
  if ("const" in schema) return [jsonType(schema.const)];
  if (Array.isArray(schema.enum)) return [...new Set(schema.enum.map(jsonType))];
  const types = declaredTypes(schema);
  if (!types) return ALL_TYPES;
  return types.includes("number") ? [...types, "integer"] : types;
}
