import Ajv2020 from "ajv/dist/2020";
import { describe, expect, it } from "vitest";
import { schemaFromExample } from "./schema-from-example";

describe("schemaFromExample", () => {
  it("infers a schema the example validates against", () => {
    const example = { name: "Ada", age: 36, score: 9.5, admin: false, tags: ["a", "b"], address: { city: "London" }, note: null };
    const schema = schemaFromExample(example);
    expect(schema).toMatchObject({
      type: "object",
      required: ["name", "age", "score", "admin", "tags", "address", "note"],
      properties: { age: { type: "integer" }, score: { type: "number" }, tags: { type: "array", items: { type: "string" } }, note: { type: "null" } },
    });
    expect(new Ajv2020().validate(schema, example)).toBe(true);
    expect(new Ajv2020().validate(schema, { ...example, extra: 1 })).toBe(false);
  });

  it("merges array items: optional keys stay optional, mixed types become anyOf", () => {
    const example = { items: [{ id: 1, label: "x" }, { id: 2.5 }], mixed: [1, "one"] };
    const schema = schemaFromExample(example) as { properties: Record<string, any> };
    expect(schema.properties.items.items).toEqual({
      type: "object",
      properties: { id: { type: "number" }, label: { type: "string" } },
      required: ["id"],
      additionalProperties: false,
    });
    expect(schema.properties.mixed.items).toEqual({ anyOf: [{ type: "integer" }, { type: "string" }] });
    expect(new Ajv2020().validate(schema, example)).toBe(true);
  });
});
