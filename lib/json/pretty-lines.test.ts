import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PrettyLines } from "./pretty-lines";

function feed(text: string, cuts: number[]): PrettyLines {
  const doc = new PrettyLines();
  let at = 0;
  for (const cut of [...cuts.map((c) => c % (text.length + 1))].sort((a, b) => a - b)) {
    doc.push(text.slice(at, cut));
    at = Math.max(at, cut);
  }
  doc.push(text.slice(at));
  return doc;
}

describe("PrettyLines", () => {
  it("lays out streamed JSON as JSON.stringify(value, null, 2) does, however the text is cut", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.array(fc.nat(), { maxLength: 20 }), (value, cuts) => {
        const text = JSON.stringify(value);
        expect(feed(text, cuts).text()).toBe(JSON.stringify(JSON.parse(text), null, 2));
      }),
      { numRuns: 300 },
    );
  });

  it("knows each line's pointer, depth and where its container closes", () => {
    const doc = feed(`{"a": [1, {"b/c": "x"}, []], "d": {}}`, [3, 9, 14]);
    expect(doc.text()).toBe(JSON.stringify({ a: [1, { "b/c": "x" }, []], d: {} }, null, 2));
    const rows = Array.from({ length: doc.count }, (_, i) => [doc.line(i).trim(), doc.path(i), doc.depth(i), doc.foldEnd(i)]);
    expect(rows).toEqual([
      ["{", "", 0, 9],
      ['"a": [', "/a", 1, 7],
      ["1,", "/a/0", 2, -1],
      ["{", "/a/1", 2, 5],
      ['"b~1c": "x"'.replace("b~1c", "b/c"), "/a/1/b~1c", 3, -1],
      ["},", "/a/1#end", 2, -1],
      ["[]", "/a/2", 2, -1],
      ["],", "/a#end", 1, -1],
      ['"d": {}', "/d", 1, -1],
      ["}", "#end", 0, -1],
    ]);
  });

  it("does work proportional to each delta: a long document's lines are written as often per byte as a short one's", () => {
    // Counted, not timed (a timed test fails on a busy machine; the time per delta is bench:page's):
    // every write to the line tables, which work redone over the whole document on each delta would multiply.
    const make = (n: number) => JSON.stringify({ items: Array.from({ length: n }, (_, i) => ({ id: i, title: `Item ${i}`, tags: ["a", "b"] })) });
    const writesPerByte = (text: string) => {
      const doc = new PrettyLines();
      let writes = 0;
      for (const table of ["lines", "depths", "paths", "foldEnds"] as const) {
        const counted = new Proxy(doc[table] as unknown[], {
          set(target, property, value) {
            writes++;
            return Reflect.set(target, property, value);
          },
        });
        Object.defineProperty(doc, table, { value: counted });
      }
      for (let i = 0; i < text.length; i += 8) doc.push(text.slice(i, i + 8));
      return writes / text.length;
    };
    const small = writesPerByte(make(500));
    const large = writesPerByte(make(5_000));
    expect(small).toBeGreaterThan(0);
    expect(large / small).toBeLessThan(1.1);
  });
});
