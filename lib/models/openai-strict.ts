import "server-only";
/**
 * OpenAI's strict structured outputs accept only a subset of JSON Schema (every property required,
 * additionalProperties false on every object). Strict mode is asked for only when the caller's
 * schema already fits; otherwise the provider is asked without it and genserve's validation and
 * retry enforce the schema.
 */
export function fitsOpenAIStrict(node: unknown, depth = 0): boolean {
  if (depth > 64) return false;
  if (node === null || typeof node !== "object") return true;
  if (Array.isArray(node)) return node.every((n) => fitsOpenAIStrict(n, depth + 1));
  const schema = node as Record<string, unknown>;
  const properties = schema.properties as Record<string, unknown> | undefined;
  const isObject = schema.type === "object" || (Array.isArray(schema.type) && schema.type.includes("object")) || properties !== undefined;
  if (isObject) {
    if (schema.additionalProperties !== false) return false;
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    if (properties && Object.keys(properties).some((k) => !required.has(k))) return false;
  }
  for (const unsupported of ["patternProperties", "if", "then", "else", "not", "dependentSchemas", "oneOf", "allOf"]) {
    if (unsupported in schema) return false;
  }
  return Object.values(schema).every((v) => fitsOpenAIStrict(v, depth + 1));
}
