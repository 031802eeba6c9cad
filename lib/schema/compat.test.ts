import { describe, expect, it } from "vitest";
import { compareSchemas } from "./compat";

const invoice = {
  type: "object",
  properties: {
    total: { type: "number", minimum: 0 },
    currency: { type: "string", enum: ["EUR", "USD"] },
    email: { type: "string", maxLength: 100 },
    lines: { type: "array", items: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] } },
  },
  required: ["total"],
};

/** Apply a change to a copy of the invoice schema. */
const changed = (edit: (s: typeof invoice & Record<string, unknown>) => void) => {
  const copy = structuredClone(invoice) as typeof invoice & Record<string, unknown>;
  edit(copy);
  return copy;
};

describe("compareSchemas", () => {
  const table: [string, ReturnType<typeof changed>, boolean, string][] = [
    ["removing a property", changed((s) => delete (s.properties as Record<string, unknown>).email), true, "/properties/email"],
    ["adding an optional property", changed((s) => Object.assign(s.properties, { note: { type: "string" } })), false, "/properties/note"],
    ["adding a required property", changed((s) => (Object.assign(s.properties, { note: { type: "string" } }), s.required.push("note"))), true, "/properties/note"],
    ["requiring an existing property", changed((s) => s.required.push("currency")), true, "/required"],
    ["no longer requiring a property", changed((s) => (s.required = [])), false, "/required"],
    ["narrowing a type", changed((s) => (s.properties.total.type = "integer")), true, "/properties/total/type"],
    ["widening a type", changed((s) => ((s.properties.total as Record<string, unknown>).type = ["number", "string"])), false, "/properties/total/type"],
    ["narrowing an enum", changed((s) => (s.properties.currency.enum = ["EUR"])), true, "/properties/currency/enum"],
    ["widening an enum", changed((s) => s.properties.currency.enum.push("GBP")), false, "/properties/currency/enum"],
    ["tightening a lower bound", changed((s) => (s.properties.total.minimum = 1)), true, "/properties/total/minimum"],
    ["loosening a lower bound", changed((s) => (s.properties.total.minimum = -5)), false, "/properties/total/minimum"],
    ["tightening an upper bound", changed((s) => (s.properties.email.maxLength = 50)), true, "/properties/email/maxLength"],
    ["loosening an upper bound", changed((s) => (s.properties.email.maxLength = 500)), false, "/properties/email/maxLength"],
    ["adding a bound", changed((s) => Object.assign(s.properties.total, { maximum: 10 })), true, "/properties/total/maximum"],
    ["removing a bound", changed((s) => delete (s.properties.email as Record<string, unknown>).maxLength), false, "/properties/email/maxLength"],
    ["adding a pattern", changed((s) => Object.assign(s.properties.email, { pattern: "@" })), true, "/properties/email/pattern"],
    ["forbidding other properties", changed((s) => Object.assign(s, { additionalProperties: false })), true, "/additionalProperties"],
    ["removing an item property", changed((s) => delete (s.properties.lines.items.properties as Record<string, unknown>).sku), true, "/properties/lines/items/properties/sku"],
    ["editing a description only", changed((s) => Object.assign(s.properties.total, { description: "Gross" })), false, ""],
    ["a keyword it cannot classify", changed((s) => Object.assign(s.properties.total, { "x-unknown": 1 })), true, "/properties/total/x-unknown"],
  ];

  it.each(table)("%s: breaking %s", (_, after, breaking, path) => {
    const changes = compareSchemas(invoice, after);
    if (path === "") {
      expect(changes).toEqual([]);
      return;
    }
    expect(changes.length).toBeGreaterThan(0);
    expect(changes.some((c) => c.breaking)).toBe(breaking);
    expect(changes.map((c) => c.path)).toContain(path);
  });

  it("reports a default schema that appears or goes", () => {
    expect(compareSchemas(undefined, invoice)).toEqual([{ path: "/", change: "default schema added", breaking: false }]);
    expect(compareSchemas(invoice, undefined)).toEqual([{ path: "/", change: "default schema removed: object runs must now send a schema", breaking: true }]);
    expect(compareSchemas(invoice, structuredClone(invoice))).toEqual([]);
    // The same values in another key order are the same schema (compared as JSON, not as text).
    expect(compareSchemas({ enum: [{ a: 1, b: 2 }] }, { enum: [{ b: 2, a: 1 }] })).toEqual([]);
    expect(compareSchemas({ const: { a: 1, b: 2 } }, { const: { b: 2, a: 1 } })).toEqual([]);
  });
});
