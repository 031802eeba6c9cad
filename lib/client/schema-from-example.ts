/**
 * "Schema from example": a JSON Schema (2020-12) that a pasted JSON example validates against.
 * Objects list every property seen as required and close additional properties; arrays merge the
 * shapes of their items; mixed types become anyOf. Browser-safe.
 */
type Schema = Record<string, unknown>;

export function schemaFromExample(example: unknown): Schema {
  const schema = infer(example);
  return { $schema: "https://json-schema.org/draft/2020-12/schema", ...schema };
}

function infer(value: unknown): Schema {
  if (value === null) return { type: "null" };
  if (Array.isArray(value)) {
    if (value.length === 0) return { type: "array", items: {} };
    return { type: "array", items: value.map(infer).reduce(merge) };
  }
  switch (typeof value) {
    case "string":
      return { type: "string" };
    case "number":
      return { type: Number.isInteger(value) ? "integer" : "number" };
    case "boolean":
      return { type: "boolean" };
    case "object": {
      const entries = Object.entries(value as Record<string, unknown>);
      return {
        type: "object",
        properties: Object.fromEntries(entries.map(([k, v]) => [k, infer(v)])),
        required: entries.map(([k]) => k),
        additionalProperties: false,
      };
    }
    default:
      return {};
  }
}

function merge(a: Schema, b: Schema): Schema {
  if (JSON.stringify(a) === JSON.stringify(b)) return a;
  if (a.type === "object" && b.type === "object") {
    const pa = a.properties as Record<string, Schema>;
    const pb = b.properties as Record<string, Schema>;
    const keys = [...new Set([...Object.keys(pa), ...Object.keys(pb)])];
    const required = (a.required as string[]).filter((k) => (b.required as string[]).includes(k));
    return {
      type: "object",
      properties: Object.fromEntries(keys.map((k) => [k, pa[k] && pb[k] ? merge(pa[k]!, pb[k]!) : (pa[k] ?? pb[k])!])),
      required,
      additionalProperties: false,
    };
  }
  if (a.type === "array" && b.type === "array") return { type: "array", items: merge(a.items as Schema, b.items as Schema) };
  if ((a.type === "integer" && b.type === "number") || (a.type === "number" && b.type === "integer")) return { type: "number" };
  const variants = [...((a.anyOf as Schema[]) ?? [a]), ...((b.anyOf as Schema[]) ?? [b])];
  const unique = variants.filter((v, i) => variants.findIndex((w) => JSON.stringify(w) === JSON.stringify(v)) === i);
  return { anyOf: unique };
}
