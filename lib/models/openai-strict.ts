import "server-only";
import { escapePointerSegment } from "../json/pointer";
/**
 * OpenAI's strict structured outputs accept only a subset of JSON Schema (every property required,
 * additionalProperties false on every object, no patternProperties, conditionals, `not`, `oneOf` or
 * `allOf`). Strict mode is asked for only when the caller's schema already fits; otherwise the
 * provider is asked without it and genserve's validation and retry enforce the schema.
 */
export function fitsOpenAIStrict(schema: unknown): boolean {
  return openAIStrictProblems(schema, 1).length === 0;
}

/** Why a schema does not fit OpenAI's strict mode, as `what at /pointer` (at most `limit` of them). */
export function openAIStrictProblems(schema: unknown, limit = 20): string[] {
  const problems: string[] = [];
  const visit = (node: unknown, path: string, depth: number): void => {
    if (problems.length >= limit) return;
    if (depth > 64) {
      problems.push(`nesting deeper than 64 at ${path || "/"}`);
      return;
    }
    if (node === null || typeof node !== "object") return;
    if (Array.isArray(node)) {
      node.forEach((n, i) => visit(n, `${path}/${i}`, depth + 1));
      return;
    }
    const record = node as Record<string, unknown>;
    const properties = record.properties as Record<string, unknown> | undefined;
    const isObject = record.type === "object" || (Array.isArray(record.type) && record.type.includes("object")) || properties !== undefined;
    if (isObject) {
      if (record.additionalProperties !== false) problems.push(`additionalProperties is not false at ${path || "/"}`);
      const required = new Set(Array.isArray(record.required) ? (record.required as string[]) : []);
      const optional = properties ? Object.keys(properties).filter((k) => !required.has(k)) : [];
      if (optional.length > 0) problems.push(`optional propert${optional.length > 1 ? "ies" : "y"} ${optional.slice(0, 3).map((k) => JSON.stringify(k)).join(", ")} at ${path || "/"}`);
    }
    for (const unsupported of ["patternProperties", "if", "then", "else", "not", "dependentSchemas", "oneOf", "allOf"]) {
      if (unsupported in record) problems.push(`${unsupported} at ${path || "/"}`);
    }
    for (const [key, value] of Object.entries(record)) visit(value, `${path}/${escapePointerSegment(key)}`, depth + 1);
  };
  visit(schema, "", 0);
  return problems.slice(0, limit);
}
