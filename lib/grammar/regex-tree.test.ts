import { describe, expect, it } from "vitest";
import { patternRefusal, patternToGbnf } from "./regex";
import { patternTree } from "./regex-tree";

describe("pattern → tree (regexpp, u flag)", () => {
  it("keeps the anchors apart and the rest as sets, sequences, alternatives and repetitions", () => {
    expect(patternTree("^a[b-c]{2,}$")).toEqual({
      anchoredStart: true,
      anchoredEnd: true,
      node: { kind: "seq", items: [{ kind: "set", ranges: [[0x61, 0x61]] }, { kind: "repeat", node: { kind: "set", ranges: [[0x62, 0x63]] }, min: 2, max: undefined }] },
    });
    expect(patternTree("(?<x>a)|\\u{1F600}")).toMatchObject({ anchoredStart: false, anchoredEnd: false, node: { kind: "alt" } });
  });

  it.each([
    ["(?=a)b", /lookahead \(\?=a\) at offset 0/],
    ["(?<!a)b", /lookbehind/],
    ["(a)\\1", /back-reference \\1 at offset 3/],
    ["a\\bc", /word boundary/],
    ["\\p{Lu}", /Unicode property escape \\p\{Lu\}/],
    ["(?i:a)", /modifier group/],
    ["a^b", /anchor \^ at offset 1 is inside the pattern/],
    ["^a|b", /anchors on only some alternatives/],
    ["a{1001}", /count \{1001\} at offset 0 is above 1000/],
    ["^4\\-x", /not a valid pattern with the u flag: .*Invalid escape/],
    ["[]", /empty class/],
  ])("refuses %s with its reason", (pattern, reason) => {
    expect(patternToGbnf(pattern)).toBeNull();
    expect(patternRefusal(pattern)).toMatch(reason);
  });

  it("gives no reason for a pattern it writes", () => {
    expect(patternRefusal("^[a-z]+$")).toBeNull();
  });
});
