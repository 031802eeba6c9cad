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
import { alt, type CharRange, complementRanges, jsonStringChar, literal, MAX_REPEAT, repeat } from "./gbnf";

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

/** The pattern's tree and its anchors, or null when it uses what GBNF cannot say here. */
function parsePattern(pattern: string): { node: Node; parser: Parser } | null {
  const parser = new Parser(pattern);
  try {
    return { node: parser.parse(), parser };
  } catch (error) {
    if (error instanceof Unsupported) return null;
    throw error;
  }
}

/** GBNF for a JSON string's content (between the quotes) whose value matches `pattern`, or null. */
export function patternToGbnf(pattern: string): string | null {
  const parsed = parsePattern(pattern);
  if (parsed === null) return null;
  const { node, parser } = parsed;
  const anyChar = jsonStringChar([[0, 0x10ffff]])!;
  const body = emit(node);
  if (body === null) return null;
  const parts = [parser.anchoredStart ? "" : `${anyChar}*`, body, parser.anchoredEnd ? "" : `${anyChar}*`];
  return parts.filter(Boolean).join(" ") || '""';
}

/**
 * GBNF for a JSON string's content that matches `pattern` and has `min` to `max` characters (code
 * points, as the validator counts them); `"none"` when no string can; null when this cannot be
 * written, and the caller leaves the length to validation.
 *
 * The length is counted along the pattern: in each alternative, its repetitions of a fixed-width
 * part (`[a-z]*`, `(ab)+`, the `.*` an unanchored end stands for) take counts that keep the total
 * in range, whatever the rest writes. With one such repetition beside fixed-width parts
 * (`^[a-z][a-z0-9_]*$`) this is exact; with several, the range is shared out among them (a sound
 * subset: every string written is in range, some strings in range are not written).
 */
export function boundedPatternToGbnf(pattern: string, min: number, max: number | undefined): string | null | "none" {
  const parsed = parsePattern(pattern);
  if (parsed === null) return null;
  const { node, parser } = parsed;
  const anyChars: Node = { kind: "repeat", node: { kind: "set", ranges: [[0, 0x10ffff]] }, min: 0, max: undefined };
  const options = node.kind === "alt" ? node.options : [node];
  const bodies: string[] = [];
  for (const option of options) {
    const items = [...(parser.anchoredStart ? [] : [anyChars]), ...(option.kind === "seq" ? option.items : [option]), ...(parser.anchoredEnd ? [] : [anyChars])];
    const [lo, hi] = lengthRange({ kind: "seq", items });
    if (hi < min || (max !== undefined && lo > max)) continue; // no string of this alternative fits
    const bounded = bound({ kind: "seq", items }, min, max);
    if (bounded === null) return null;
    const body = emit(bounded);
    if (body === null) return null;
    bodies.push(body);
  }
  return bodies.length === 0 ? "none" : alt(bodies);
}

const sumRanges = (ranges: [number, number][]): [number, number] => ranges.reduce(([a, b], [c, d]) => [a + c, b + d], [0, 0]);

/** The fewest and most characters a node's strings have (Infinity: unbounded). */
function lengthRange(node: Node): [number, number] {
  switch (node.kind) {
    case "set":
      return [1, 1];
    case "seq":
      return sumRanges(node.items.map(lengthRange));
    case "alt": {
      const ranges = node.options.map(lengthRange);
      return [Math.min(...ranges.map((r) => r[0])), Math.max(...ranges.map((r) => r[1]))];
    }
    case "repeat": {
      const [lo, hi] = lengthRange(node.node);
      return [node.min * lo, hi === 0 ? 0 : node.max === undefined ? Infinity : node.max * hi];
    }
  }
}

/** `node` narrowed to its strings of min..max characters (perhaps a sound subset of them); null if it cannot be. */
function bound(node: Node, min: number, max: number | undefined): Node | null {
  const [lo, hi] = lengthRange(node);
  if (lo >= min && (max === undefined || hi <= max)) return node;
  const fits = (n: Node) => {
    const [a, b] = lengthRange(n);
    return b >= min && (max === undefined || a <= max);
  };
  switch (node.kind) {
    case "set":
      return null; // one character, out of range (callers drop such alternatives first)
    case "alt": {
      const options = node.options.filter(fits).map((o) => bound(o, min, max));
      return options.length && options.every((o) => o !== null) ? { kind: "alt", options: options as Node[] } : null;
    }
    case "repeat": {
      // `(x{1,n})?` is `x{0,n}`; `(…)?` is "nothing or …"; other repetitions are counted in a sequence.
      if (node.max === 1 && node.min === 0) {
        const inner = node.node;
        if (inner.kind === "repeat" && inner.min <= 1) return bound({ ...inner, min: 0 }, min, max);
        const options: Node[] = min === 0 ? [{ kind: "seq", items: [] }] : [];
        if (fits(inner)) {
          const bounded = bound(inner, Math.max(min, 1), max);
          if (bounded === null) return null;
          options.push(bounded);
        }
        return options.length ? { kind: "alt", options } : null;
      }
      return boundSequence([node], min, max);
    }
    case "seq":
      if (node.items.length === 1) return bound(node.items[0]!, min, max);
      // `(x+)?` inside a sequence is counted as `x*`.
      return boundSequence(
        node.items.map((n) => (n.kind === "repeat" && n.min === 0 && n.max === 1 && n.node.kind === "repeat" && n.node.min <= 1 ? { ...n.node, min: 0 } : n)),
        min,
        max,
      );
  }
}

/** A sequence with the counts of its fixed-width repetitions set so the total is in range; null if it cannot be. */
function boundSequence(items: Node[], min: number, max: number | undefined): Node | null {
  const ranges = items.map(lengthRange);
  const total = sumRanges(ranges);
  if (total[0] >= min && (max === undefined || total[1] <= max)) return { kind: "seq", items };
  // One part of variable length beside fixed ones: it takes the whole range (exact).
  const variable = ranges.map((r, i) => (r[0] !== r[1] ? i : -1)).filter((i) => i >= 0);
  if (variable.length === 1 && items.length > 1) {
    const i = variable[0]!;
    const fixed = total[0] - ranges[i]![0];
    const inner = bound(items[i]!, Math.max(0, min - fixed), max === undefined ? undefined : max - fixed);
    if (inner === null) return null;
    return { kind: "seq", items: items.map((n, k) => (k === i ? inner : n)) };
  }
  // Repetitions of a part of one width can be counted; everything else is taken at its extremes.
  const width = (n: Node) => {
    if (n.kind !== "repeat") return 0;
    const [lo, hi] = lengthRange(n.node);
    return lo === hi ? lo : 0;
  };
  const counted = items.map((n, i) => (ranges[i]![0] !== ranges[i]![1] && width(n) > 0 ? i : -1)).filter((i) => i >= 0);
  if (counted.length === 0) return null;
  const rest = sumRanges(ranges.filter((_, i) => !counted.includes(i)));
  const reps = counted.map((i) => items[i] as Extract<Node, { kind: "repeat" }>);
  const lows = reps.map((r) => r.min);
  const highs = reps.map((r) => r.max ?? Infinity);
  if (max !== undefined) {
    if (rest[1] === Infinity) return null;
    // What the rest leaves (at its longest), above each repetition's own minimum, is shared out:
    // the narrowest repetitions (`s?`) take what they can hold, the others split what remains.
    let slack = max - rest[1] - reps.reduce((sum, r, k) => sum + r.min * width(items[counted[k]!]!), 0);
    if (slack < 0) return null;
    const order = reps.map((_, k) => k).sort((a, b) => (highs[a]! - lows[a]!) * width(items[counted[a]!]!) - (highs[b]! - lows[b]!) * width(items[counted[b]!]!));
    order.forEach((k, n) => {
      const w = width(items[counted[k]!]!);
      const extra = Math.min(highs[k]! - lows[k]!, Math.floor(Math.floor(slack / (order.length - n)) / w));
      highs[k] = lows[k]! + extra;
      slack -= extra * w;
    });
  }
  // llama.cpp enforces counts up to MAX_REPEAT: a longer share is cut to it (a subset).
  reps.forEach((_, k) => {
    if (highs[k] !== Infinity) highs[k] = Math.min(highs[k]!, Math.max(lows[k]!, MAX_REPEAT));
  });
  // The shortest string must still be long enough: the last repetitions write more.
  let deficit = min - rest[0] - reps.reduce((sum, _, k) => sum + lows[k]! * width(items[counted[k]!]!), 0);
  for (let k = reps.length - 1; k >= 0 && deficit > 0; k--) {
    const w = width(items[counted[k]!]!);
    const more = Math.min(highs[k]! - lows[k]!, Math.ceil(deficit / w));
    lows[k]! += more;
    deficit -= more * w;
  }
  if (deficit > 0) return null;
  if (highs.some((h, k) => (h === Infinity ? lows[k]! : h) > MAX_REPEAT)) return null;
  const out = [...items];
  counted.forEach((i, k) => {
    out[i] = { ...reps[k]!, min: lows[k]!, max: highs[k] === Infinity ? undefined : highs[k] };
  });
  return { kind: "seq", items: out };
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
