import { describe, expect, it } from "vitest";
import type { FieldError } from "../errors";
import { PartialJsonParser } from "../json/partial";
import { FieldReporter, type FieldEvent } from "./field-reporter";

/** Streams `text` in pieces of `size` through the parser and a reporter, as an attempt does. */
function report(text: string, size: number, verdict: (pointer: string, value: unknown) => FieldError[] | null = () => []) {
  const fields: FieldEvent[] = [];
  const reporter = new FieldReporter((field) => fields.push(field));
  const closed: [string, unknown][] = [];
  const parser = new PartialJsonParser((pointer, value) => closed.push([pointer, value]));
  let doomed: FieldError[] = [];
  for (let i = 0; i < text.length && doomed.length === 0; i += size) {
    parser.push(text.slice(i, i + size));
    while (doomed.length === 0 && closed.length > 0) {
      const [pointer, value] = closed.shift()!;
      if (pointer !== "") doomed = reporter.closed(pointer, value, verdict(pointer, value));
    }
  }
  return { fields, doomed };
}

const DOC = '{"customer": {"name": "Ada", "email": "ada@example.com"}, "lines": [{"sku": "a/b", "qty": 2}, {"sku": "c~d", "qty": 1}], "note": null, "paid": true}';

describe("FieldReporter", () => {
  it.each([1, 4, 1000])("reports every value once as it closes, leaves before their containers (%i-character pieces)", (size) => {
    const { fields, doomed } = report(DOC, size);
    expect(doomed).toEqual([]);
    expect(fields.map((f) => f.pointer)).toEqual([
      "/customer/name",
      "/customer/email",
      "/customer",
      "/lines/0/sku",
      "/lines/0/qty",
      "/lines/0",
      "/lines/1/sku",
      "/lines/1/qty",
      "/lines/1",
      "/lines",
      "/note",
      "/paid",
    ]);
    const doc = JSON.parse(DOC);
    expect(fields.find((f) => f.pointer === "/customer")!.value).toEqual(doc.customer);
    expect(fields.find((f) => f.pointer === "/lines")!.value).toEqual(doc.lines);
    expect(fields.find((f) => f.pointer === "/customer/email")!.value).toBe("ada@example.com");
    expect(fields.every((f) => f.valid === true)).toBe(true);
  });

  it("escapes keys as JSON Pointer tokens", () => {
    const { fields } = report('{"a/b": {"c~d": 1}}', 3);
    expect(fields.map((f) => f.pointer)).toEqual(["/a~1b/c~0d", "/a~1b"]);
  });

  it("reports the verdict: false with problems (which doom the attempt), null when undecidable", () => {
    const { fields, doomed } = report('{"x": 1, "y": "z", "w": 3}', 2, (pointer) =>
      pointer === "/x" ? null : pointer === "/y" ? [{ path: "/y", message: "must be number" }] : [],
    );
    expect(fields).toEqual([
      { pointer: "/x", value: 1, valid: null },
      { pointer: "/y", value: "z", valid: false },
    ]);
    expect(doomed).toEqual([{ path: "/y", message: "must be number" }]);
  });

  it("fails the attempt at a duplicate key instead of reporting a pointer twice", () => {
    const { fields, doomed } = report('{"a": {"b": 1}, "a": {"b": 2}}', 5);
    expect(fields.map((f) => f.pointer)).toEqual(["/a/b", "/a"]);
    expect(doomed).toEqual([{ path: "/a/b", message: expect.stringMatching(/duplicate key/) }]);
  });
});
