/** Schemas to start from in the playground. */
export const SCHEMA_TEMPLATES: { id: string; label: string; schema: Record<string, unknown> }[] = [
  {
    id: "person",
    label: "Person",
    schema: {
      type: "object",
      properties: {
        name: { type: "string", description: "Full name" },
        age: { type: "integer", minimum: 0 },
        email: { type: "string", format: "email" },
      },
      required: ["name"],
      additionalProperties: false,
    },
  },
  {
    id: "invoice",
    label: "Invoice",
    schema: {
      type: "object",
      properties: {
        number: { type: "string" },
        date: { type: "string", format: "date" },
        currency: { enum: ["EUR", "USD", "GBP"] },
        total: { type: "number", minimum: 0 },
        lines: {
          type: "array",
          items: {
            type: "object",
            properties: { description: { type: "string" }, quantity: { type: "number" }, amount: { type: "number" } },
            required: ["description", "amount"],
          },
        },
      },
      required: ["number", "currency", "total"],
    },
  },
  {
    id: "list",
    label: "List of items",
    schema: { type: "array", items: { type: "object", properties: { title: { type: "string" }, done: { type: "boolean" } }, required: ["title"] }, minItems: 1 },
  },
  {
    id: "sentiment",
    label: "Sentiment (enum)",
    schema: { type: "string", enum: ["positive", "negative", "neutral"] },
  },
  {
    id: "tree",
    label: "Nested / recursive",
    schema: {
      type: "object",
      $ref: "#/$defs/node",
      $defs: {
        node: {
          type: "object",
          properties: { label: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/node" } } },
          required: ["label"],
        },
      },
    },
  },
];
