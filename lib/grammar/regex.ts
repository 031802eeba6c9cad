/**
 * JSON Schema `pattern` (ECMA-262 regex, `u` flag) → GBNF over JSON string text, for the common
 * subset: literals and escapes, classes (`[a-z]`, `[^…]`, `\d \w \s` and negations), `.`, groups
 * (capturing, `(?:…)`, named), alternation, quantifiers (`* + ? {m} {m,} {m,n}`, lazy or not) and
 * anchors at the ends. The pattern is read by regexpp into a small tree (regex-tree.ts, which says
 * why it refuses the rest: lookarounds, back-references, word boundaries…); a refused pattern makes
 * these functions return null and the caller falls back to validate-and-retry.
 *
 * JSON Schema patterns are not anchored: an unanchored end is matched by any further characters.
 */
import "server-only";
import { alt, type CharRange, jsonStringChar, literal, MAX_REPEAT, repeat } from "./gbnf";
import { type Node, patternTree, type PatternTree } from "./regex-tree";

/** The last pattern read: the compiler asks the functions below about one pattern in turn. */
let last: { pattern: string; tree: ReturnType<typeof patternTree> } | undefined;

/** The pattern's tree and its anchors, or null when it uses what GBNF cannot say here. */
function parsePattern(pattern: string): PatternTree | null {
  if (last?.pattern !== pattern) last = { pattern, tree: patternTree(pattern) };
  return "refused" in last.tree ? null : last.tree;
}

/** GBNF for a JSON string's content (between the quotes) whose value matches `pattern`, or null. */
export function patternToGbnf(pattern: string): string | null {
  const parsed = parsePattern(pattern);
  if (parsed === null) return null;
  const { node } = parsed;
  const anyChar = jsonStringChar([[0, 0x10ffff]])!;
  const body = emit(node);
  if (body === null) return null;
  const parts = [parsed.anchoredStart ? "" : `${anyChar}*`, body, parsed.anchoredEnd ? "" : `${anyChar}*`];
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
  const { node } = parsed;
  const anyChars: Node = { kind: "repeat", node: { kind: "set", ranges: [[0, 0x10ffff]] }, min: 0, max: undefined };
  const options = node.kind === "alt" ? node.options : [node];
  const bodies: string[] = [];
  for (const option of options) {
    const items = [...(parsed.anchoredStart ? [] : [anyChars]), ...(option.kind === "seq" ? option.items : [option]), ...(parsed.anchoredEnd ? [] : [anyChars])];
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
  const parsed = parsePattern(pattern);
  if (parsed === null || !parsed.anchoredStart || !parsed.anchoredEnd) return null;
  const { node } = parsed;
  if (node.kind === "set") return { ranges: node.ranges, min: 1, max: 1 };
  if (node.kind === "repeat" && node.node.kind === "set") return { ranges: node.node.ranges, min: node.min, max: node.max };
  return null;
}

/** Why `pattern` has no grammar here (what `patternToGbnf` answers null for), or null when it has one. */
export function patternRefusal(pattern: string): string | null {
  const tree = patternTree(pattern);
  if ("refused" in tree) return tree.refused;
  if (patternToGbnf(pattern) === null) return "it needs a character JSON string text cannot carry here (an empty class, or a control character without a short escape)";
  return null;
}
