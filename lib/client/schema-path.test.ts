import { describe, expect, it } from "vitest";
import { schemaPathFor } from "./schema-path";

const schema = {
  type: "object",
  properties: {
    lines: { type: "array", items: { $ref: "#/$defs/line" } },
    "a/b": { type: "string" },
  },
  $defs: { line: { type: "object", properties: { amount: { type: "number" } } } },
};

describe("schemaPathFor", () => {
  it("maps output locations to the schema rules that govern them", () => {
    expect(schemaPathFor(schema, "/lines/0/amount")).toBe("/$defs/line/properties/amount");
    expect(schemaPathFor(schema, "/lines/3")).toBe("/properties/lines/items");
    expect(schemaPathFor(schema, "/a~1b")).toBe("/properties/a~1b");
    expect(schemaPathFor(schema, "/")).toBe("");
    expect(schemaPathFor(schema, "/unknown/x")).toBe("");
  });
});
