/**
 * JSON Schema `pattern` (ECMA-262 regex) → GBNF over JSON string text, for the common subset:
 * literals and escapes, classes (`[a-z]`, `[^…]`, `\d \w \s` and negations), `.`, groups
 * (capturing, `(?:…)`, named), alternation, quantifiers (`* + ? {m} {m,} {m,n}`, lazy or not) and
 * anchors at the ends. Lookarounds, backreferences and word boundaries are not regular enough for
 * GBNF here; they make `toGbnf` return null and the caller falls back to validate-and-retry.
 *
 * JSON Schema patterns are not anchored: an unanchored end is matched by any further characters.
 */
import "server-only";
import { alt, type CharRange, complementRanges, jsonStringChar, literal, repeat } from "./gbnf";

type Node =
  | { kind: "set"; ranges: CharRange[] }
  | { kind: "seq"; items: Node[] }
  | { kind: "alt"; options: Node[] }
  | { kind: "repeat"; node: Node; min: number; max: number | undefined };

class Unsupported extends Error {}

const DIGIT: CharRange[] = [[0x30, 0x39]];
const WORD: CharRange[] = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
/** ECMAScript's `\s`: its WhiteSpace (Unicode Zs included) and LineTerminator code points. */
const SPACE: CharRange[] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const LINE_TERMINATORS: CharRange[] = [
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
];

/** Repetition counts above this are treated as unsupported (the grammar would be huge). */
const MAX_COUNT = 1000;

class Parser {
  pos = 0;
  anchoredStart = false;
  anchoredEnd = false;
  constructor(private readonly src: string) {}

  parse(): Node {
    const starts: boolean[] = [];
    const ends: boolean[] = [];
    const options: Node[] = [];
    for (;;) {
      const anchored = this.peek() === "^";
      if (anchored) this.pos++;
      starts.push(anchored);
      const [node, endAnchor] = this.sequence(true);
      options.push(node);
      ends.push(endAnchor);
      if (this.peek() !== "|") break;
      this.pos++;
    }
    if (this.pos < this.src.length) throw new Unsupported(`unexpected ${this.src[this.pos]}`);
    // `^a$|^b$` is fine; `^a|b` anchors only one branch, which GBNF here does not model.
    if (new Set(starts).size > 1 || new Set(ends).size > 1) throw new Unsupported("mixed anchors");
    this.anchoredStart = starts[0] ?? false;
    this.anchoredEnd = ends[0] ?? false;
    return options.length === 1 ? options[0]! : { kind: "alt", options };
  }

  private peek() {
    return this.src[this.pos];
  }

  private alternation(): Node {
    const options = [this.sequence(false)[0]];
    while (this.peek() === "|") {
      this.pos++;
      options.push(this.sequence(false)[0]);
    }
    return options.length === 1 ? options[0]! : { kind: "alt", options };
  }

  /** A sequence up to `|` or `)`; at the top level, also whether it ended with `$`. */
  private sequence(top: boolean): [Node, boolean] {
    const items: Node[] = [];
    let endAnchor = false;
    while (this.pos < this.src.length && this.peek() !== "|" && this.peek() !== ")") {
      if (this.peek() === "$") {
        this.pos++;
        const atEnd = this.pos === this.src.length || this.peek() === "|";
        if (!top || !atEnd) throw new Unsupported("$ inside the pattern");
        endAnchor = true;
        continue;
      }
      if (this.peek() === "^") throw new Unsupported("^ inside the pattern");
      items.push(this.quantified());
    }
    return [items.length === 1 ? items[0]! : { kind: "seq", items }, endAnchor];
  }

  private quantified(): Node {
    const atom = this.atom();
    const c = this.peek();
    let min: number;
    let max: number | undefined;
    if (c === "*") [min, max] = [0, undefined];
    else if (c === "+") [min, max] = [1, undefined];
    else if (c === "?") [min, max] = [0, 1];
    else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.pos));
      if (!m) return atom; // a literal "{" as in ECMA-262 Annex B
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === "" ? undefined : Number(m[3]);
      if (min > MAX_COUNT || (max ?? 0) > MAX_COUNT || (max !== undefined && max < min)) throw new Unsupported("count");
      this.pos += m[0].length - 1;
    } else return atom;
    this.pos++;
    if (this.peek() === "?") this.pos++; // lazy: same language
    if ("*+?{".includes(this.peek() ?? "") && this.peek() !== undefined) throw new Unsupported("stacked quantifier");
    return { kind: "repeat", node: atom, min, max };
  }

  private atom(): Node {
    const c = this.src[this.pos++];
    if (c === "(") {
      if (this.peek() === "?") {
        const rest = this.src.slice(this.pos);
        if (rest.startsWith("?:")) this.pos += 2;
        else if (/^\?<[A-Za-z_$][\w$]*>/.test(rest)) this.pos = this.src.indexOf(">", this.pos) + 1;
        else throw new Unsupported("lookaround");
      }
      const inner = this.alternation();
      if (this.src[this.pos++] !== ")") throw new Unsupported("unclosed group");
      return inner;
    }
    if (c === "[") return { kind: "set", ranges: this.classBody() };
    if (c === ".") return { kind: "set", ranges: complementRanges(LINE_TERMINATORS) };
    if (c === "\\") return { kind: "set", ranges: this.escape(false) };
    if (c === ")" || c === "*" || c === "+" || c === "?") throw new Unsupported(`stray ${c}`);
    const cp = this.src.codePointAt(this.pos - 1)!;
    if (cp > 0xffff) this.pos++;
    return { kind: "set", ranges: [[cp, cp]] };
  }

  private classBody(): CharRange[] {
    let negated = false;
    if (this.peek() === "^") {
      negated = true;
      this.pos++;
    }
    const ranges: CharRange[] = [];
    while (this.pos < this.src.length && this.peek() !== "]") {
      const start = this.classAtom();
      const from = singleChar(start);
      if (this.peek() === "-" && this.src[this.pos + 1] !== "]" && this.pos + 1 < this.src.length && from !== null) {
        this.pos++;
        const to = singleChar(this.classAtom());
        if (to === null || to < from) throw new Unsupported("class range");
        ranges.push([from, to]);
      } else ranges.push(...start);
    }
    if (this.src[this.pos++] !== "]") throw new Unsupported("unclosed class");
    return negated ? complementRanges(ranges) : ranges;
  }

  private classAtom(): CharRange[] {
    const c = this.src[this.pos++];
    if (c === "\\") return this.escape(true);
    const cp = this.src.codePointAt(this.pos - 1)!;
    if (cp > 0xffff) this.pos++;
    return [[cp, cp]];
  }

  private escape(inClass: boolean): CharRange[] {
    const c = this.src[this.pos++];
    const single = (cp: number): CharRange[] => [[cp, cp]];
    switch (c) {
      case "d":
        return DIGIT;
      case "D":
        return complementRanges(DIGIT);
      case "w":
        return WORD;
      case "W":
        return complementRanges(WORD);
      case "s":
        return SPACE;
      case "S":
        return complementRanges(SPACE);
      case "n":
        return single(0x0a);
      case "r":
        return single(0x0d);
      case "t":
        return single(0x09);
      case "f":
        return single(0x0c);
      case "v":
        return single(0x0b);
      case "0":
        return single(0);
      case "b":
        if (inClass) return single(0x08);
        throw new Unsupported("word boundary");
      case "x": {
        const m = /^[0-9a-fA-F]{2}/.exec(this.src.slice(this.pos));
        if (!m) throw new Unsupported("\\x");
        this.pos += 2;
        return single(parseInt(m[0], 16));
      }
      case "u": {
        const braced = /^\{([0-9a-fA-F]{1,6})\}/.exec(this.src.slice(this.pos));
        if (braced) {
          this.pos += braced[0].length;
          return single(parseInt(braced[1]!, 16));
        }
        const m = /^[0-9a-fA-F]{4}/.exec(this.src.slice(this.pos));
        if (!m) throw new Unsupported("\\u");
        this.pos += 4;
        return single(parseInt(m[0], 16));
      }
      case undefined:
        throw new Unsupported("trailing backslash");
      default:
        if (/[1-9]/.test(c)) throw new Unsupported("backreference");
        if (/[A-Za-z]/.test(c)) throw new Unsupported(`\\${c}`);
        return single(c.codePointAt(0)!);
    }
  }
}

/** GBNF for a JSON string's content (between the quotes) whose value matches `pattern`, or null. */
export function patternToGbnf(pattern: string): string | null {
  let node: Node;
  let parser: Parser;
  try {
    parser = new Parser(pattern);
    node = parser.parse();
  } catch (error) {
    if (error instanceof Unsupported) return null;
    throw error;
  }
  const anyChar = jsonStringChar([[0, 0x10ffff]])!;
  const body = emit(node);
  if (body === null) return null;
  const parts = [parser.anchoredStart ? "" : `${anyChar}*`, body, parser.anchoredEnd ? "" : `${anyChar}*`];
  return parts.filter(Boolean).join(" ") || '""';
}

/** The code point when `ranges` is exactly one character. */
function singleChar(ranges: readonly CharRange[]): number | null {
  const only = ranges.length === 1 ? ranges[0]! : null;
  return only && only[0] === only[1] ? only[0] : null;
}

function emit(node: Node): string | null {
  switch (node.kind) {
    case "set": {
      const cp = singleChar(node.ranges);
      if (cp !== null) {
        const ch = String.fromCodePoint(cp);
        if (cp >= 0x20 && ch !== '"' && ch !== "\\") return literal(ch);
      }
      return jsonStringChar(node.ranges);
    }
    case "seq": {
      const parts = node.items.map(emit);
      if (parts.some((p) => p === null)) return null;
      return parts.length ? `(${parts.filter(Boolean).join(" ")})` : '""';
    }
    case "alt": {
      const parts = node.options.map(emit);
      if (parts.some((p) => p === null)) return null;
      return alt(parts.map((p) => p || '""'));
    }
    case "repeat": {
      const inner = emit(node.node);
      if (inner === null) return null;
      return repeat(inner.startsWith("(") || /^"[^"]*"$|^\[.*\]$/.test(inner) ? inner : `(${inner})`, node.min, node.max) || '""';
    }
  }
}

/**
 * When a pattern is exactly one anchored character class with a quantifier (`^[a-z0-9-]+$`,
 * `^\\d{3,5}$`), its class and counts, so that a length range can be intersected with them.
 */
export function singleClassPattern(pattern: string): { ranges: CharRange[]; min: number; max: number | undefined } | null {
  let parser: Parser;
  let node: Node;
  try {
    parser = new Parser(pattern);
    node = parser.parse();
  } catch {
    return null;
  }
  if (!parser.anchoredStart || !parser.anchoredEnd) return null;
  if (node.kind === "set") return { ranges: node.ranges, min: 1, max: 1 };
  if (node.kind === "repeat" && node.node.kind === "set") return { ranges: node.node.ranges, min: node.min, max: node.max };
  return null;
}
