import { describe, expect, it } from "vitest";
import { PartialJsonParser } from "./partial";

const DOCS = [
  '{"a": 1, "b": [true, false, null, -2.5e3], "c": {"d": "x\\"y\\\\z\\u00e9\\n"}, "e": []}',
  '[{"k": "v"}, 3, "s", {}, [[]]]',
  '"just a string"',
  "42",
  '{"unicode": "\\ud83d\\ude00 ok", "slash": "a\\/b"}',
];

function feed(text: string, size: number): PartialJsonParser {
  const parser = new PartialJsonParser();
  for (let i = 0; i < text.length; i += size) expect(parser.push(text.slice(i, i + size))).toBe(true);
  return parser;
}

describe("PartialJsonParser", () => {
  it.each(DOCS.flatMap((doc) => [1, 3, 7, 1000].map((size) => [doc, size] as const)))("parses %s in %i-character pieces like JSON.parse", (doc, size) => {
    const parser = feed(doc, size);
    expect(parser.done).toBe(true);
    expect(parser.result()).toEqual(JSON.parse(doc));
  });

  it("shows the value so far, with the unfinished string in place", () => {
    const parser = new PartialJsonParser();
    parser.push('{"name": "Ada Lov');
    expect(parser.snapshot()).toEqual({ value: { name: "Ada Lov" }, streamingPath: "/name" });
    parser.push('elace", "tags": ["x", "y');
    expect(parser.snapshot()).toEqual({ value: { name: "Ada Lovelace", tags: ["x", "y"] }, streamingPath: "/tags/1" });
    parser.push('"], "n": 12');
    expect(parser.snapshot()).toEqual({ value: { name: "Ada Lovelace", tags: ["x", "y"], n: 12 }, streamingPath: "/n" });
    parser.push("}");
    expect(parser.snapshot()).toEqual({ value: { name: "Ada Lovelace", tags: ["x", "y"], n: 12 }, streamingPath: null });
  });

  it("records each value's pointer as it closes", () => {
    const parser = feed('{"a": {"b~c": [1, "x"]}, "d/e": null}', 2);
    expect(parser.closed).toEqual(["/a/b~0c/0", "/a/b~0c/1", "/a/b~0c", "/a", "/d~1e", ""]);
  });

  it("snapshots are copies: later input does not change them", () => {
    const parser = new PartialJsonParser();
    parser.push('{"a": [1');
    const before = parser.snapshot().value;
    parser.push(", 2]}");
    expect(before).toEqual({ a: [1] });
  });

  it.each([
    ['{"a" 1}', /expected ":"/],
    ["[1 2]", /expected ","/],
    ['{"a": tru}', /not a JSON value/],
    ['{"a": "\\x"}', /invalid escape/],
    ["{} {}", /after the JSON value/],
    ["{,}", /expected a property name/],
  ])("reports %s as not JSON", (doc, message) => {
    const parser = new PartialJsonParser();
    parser.push(doc);
    expect(() => parser.result()).toThrow(message);
  });

  it("keeps keys named __proto__ or toString as data, polluting nothing", () => {
    const text = '{"__proto__": {"polluted": "yes"}, "toString": {"x": "y"}, "a": 1}';
    const parser = new PartialJsonParser();
    for (const c of text) {
      parser.push(c);
      parser.snapshot();
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const result = parser.result() as object;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(JSON.stringify(result)).toBe(JSON.stringify(JSON.parse(text)));
    const half = new PartialJsonParser();
    half.push('{"__proto__": {"polluted": "ye');
    expect(half.snapshot()).toEqual({ value: JSON.parse('{"__proto__": {"polluted": "ye"}}'), streamingPath: "/__proto__/polluted" });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("knows an incomplete document from a complete one", () => {
    const parser = new PartialJsonParser();
    parser.push('{"a": [1, 2]');
    expect(parser.done).toBe(false);
    expect(() => parser.result()).toThrow(/incomplete/);
  });
});

describe("PartialJsonParser onClose", () => {
  it("reports each value with its pointer as it closes", () => {
    const seen: [string, unknown][] = [];
    const parser = new PartialJsonParser((path, value) => seen.push([path, structuredClone(value)]));
    parser.push('{"a": [1, {"b": "x"}], "c": true}');
    expect(seen).toEqual([
      ["/a/0", 1],
      ["/a/1/b", "x"],
      ["/a/1", { b: "x" }],
      ["/a", [1, { b: "x" }]],
      ["/c", true],
      ["", { a: [1, { b: "x" }], c: true }],
    ]);
  });
});
