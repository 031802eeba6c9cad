import { describe, expect, it } from "vitest";
import { escapePointerSegment, parsePointer, toPointer, unescapePointerSegment } from "./pointer";

describe("JSON Pointer segments", () => {
  it("escapes and unescapes in RFC 6901's order (`~01` is `~1`, not `/`)", () => {
    for (const key of ["a/b", "~", "~1", "~0/", "", "plain", "é/~x"]) expect(unescapePointerSegment(escapePointerSegment(key))).toBe(key);
    expect(unescapePointerSegment("~01")).toBe("~1");
    expect(unescapePointerSegment("a~1b~0c")).toBe("a/b~c");
    expect(escapePointerSegment("a/b~c")).toBe("a~1b~0c");
  });

  it("parses what toPointer writes", () => {
    expect(parsePointer(toPointer(["a/b", "~", 0, ""]))).toEqual(["a/b", "~", "0", ""]);
    expect(parsePointer("")).toEqual([]);
  });
});
