import { describe, expect, it } from "vitest";
import { StreamUnwrapper, unwrapText, wrapSchema } from "./envelope";

describe("envelope for object-root-only providers", () => {
  it("wraps a non-object schema and keeps its definitions resolvable", () => {
    expect(wrapSchema({ type: "array", items: { $ref: "#/$defs/x" }, $defs: { x: { type: "string" } } })).toEqual({
      type: "object",
      properties: { value: { type: "array", items: { $ref: "#/$defs/x" } } },
      required: ["value"],
      additionalProperties: false,
      $defs: { x: { type: "string" } },
    });
  });

  it("unwraps complete text", () => {
    expect(unwrapText('{"value": ["a", 1]}')).toBe('["a",1]');
    expect(unwrapText("not json")).toBe("not json");
  });

  it.each([1, 2, 3, 5, 100])("unwraps streamed text in %i-character pieces so the pieces concatenate to the inner JSON", (size) => {
    const wrapped = ' {"value" : ["a", {"b": "}"}, 3] } ';
    const unwrapper = new StreamUnwrapper();
    let out = "";
    for (let i = 0; i < wrapped.length; i += size) out += unwrapper.push(wrapped.slice(i, i + size));
    out += unwrapper.end();
    expect(JSON.parse(out)).toEqual(["a", { b: "}" }, 3]);
  });
});
