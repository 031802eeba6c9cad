/**
 * A JSON Schema `pattern` as the small tree the GBNF writer (regex.ts) works on: sets of code
 * points, sequences, alternatives and counted repetitions, with the anchors at its ends apart.
 *
 * The pattern is parsed by regexpp with the `u` flag (lib/regex/ecma-syntax.mjs, the parser the
 * validator's pattern engine uses too), so the grammar and the validator read the same language.
 * What this tree cannot say is refused with the reason: lookarounds, back-references, word
 * boundaries, Unicode property escapes, modifier groups, anchors anywhere but at the ends (or on
 * only some alternatives), counts above 1,000, and patterns that are not valid with the `u` flag.
 */
import "server-only";
import type { AST } from "@eslint-community/regexpp";
import { DIGIT, LINE_TERMINATORS, parseEcmaPattern, SPACE, WORD } from "../regex/ecma-syntax.mjs";
import { type CharRange, complementRanges } from "./gbnf";

export type Node =
  | { kind: "set"; ranges: CharRange[] }
  | { kind: "seq"; items: Node[] }
  | { kind: "alt"; options: Node[] }
  | { kind: "repeat"; node: Node; min: number; max: number | undefined };

/** A pattern the tree can hold: its body and whether it is anchored at each end. */
export interface PatternTree {
  node: Node;
  anchoredStart: boolean;
  anchoredEnd: boolean;
}

/** Repetition counts above this are refused (the grammar would be huge). */
const MAX_COUNT = 1000;

class Refused extends Error {}

const at = (node: AST.Node) => `at offset ${node.start}`;

/** The members of `\d \D \w \W \s \S` and `.`; null for what has no fixed set here. */
function escapeSet(node: AST.CharacterSet): CharRange[] {
  const set = (ranges: readonly (readonly [number, number])[], negate: boolean) => (negate ? complementRanges(ranges) : ranges.map(([a, b]) => [a, b] as const));
  switch (node.kind) {
    case "any":
      return complementRanges(LINE_TERMINATORS);
    case "digit":
      return set(DIGIT, node.negate);
    case "word":
      return set(WORD, node.negate);
    case "space":
      return set(SPACE, node.negate);
    case "property":
      throw new Refused(`the Unicode property escape ${node.raw} ${at(node)} has no character table here`);
  }
}

function classSet(node: AST.CharacterClass): CharRange[] {
  const ranges: CharRange[] = [];
  for (const element of node.elements) {
    if (element.type === "Character") ranges.push([element.value, element.value]);
    else if (element.type === "CharacterClassRange") ranges.push([element.min.value, element.max.value]);
    else if (element.type === "CharacterSet") ranges.push(...escapeSet(element));
    else throw new Refused(`${element.raw} ${at(element)} in a class is not supported`);
  }
  return node.negate ? complementRanges(ranges) : ranges;
}

/** One alternative's elements as a node: one item stands alone, several make a sequence. */
function sequence(elements: readonly AST.Element[]): Node {
  const items = elements.map(element);
  return items.length === 1 ? items[0]! : { kind: "seq", items };
}

function alternation(alternatives: readonly AST.Alternative[]): Node {
  const options = alternatives.map((a) => sequence(a.elements));
  return options.length === 1 ? options[0]! : { kind: "alt", options };
}

function element(node: AST.Element): Node {
  switch (node.type) {
    case "Character":
      return { kind: "set", ranges: [[node.value, node.value]] };
    case "CharacterSet":
      return { kind: "set", ranges: escapeSet(node) };
    case "CharacterClass":
      return { kind: "set", ranges: classSet(node) };
    case "Group":
      if (node.modifiers) throw new Refused(`the modifier group ${node.raw.slice(0, 8)}… ${at(node)} is not supported`);
      return alternation(node.alternatives);
    case "CapturingGroup":
      return alternation(node.alternatives);
    case "Quantifier": {
      const max = node.max === Infinity ? undefined : node.max;
      if (node.min > MAX_COUNT || (max ?? 0) > MAX_COUNT) throw new Refused(`the count ${node.raw.slice(node.element.raw.length)} ${at(node)} is above ${MAX_COUNT}`);
      return { kind: "repeat", node: element(node.element), min: node.min, max };
    }
    case "Assertion":
      if (node.kind === "start" || node.kind === "end") throw new Refused(`the anchor ${node.raw} ${at(node)} is inside the pattern, not at an end`);
      if (node.kind === "word") throw new Refused(`the word boundary ${node.raw} ${at(node)} is not regular enough for a grammar`);
      throw new Refused(`the ${node.kind} ${node.raw.slice(0, 12)}${node.raw.length > 12 ? "…" : ""} ${at(node)} is not regular enough for a grammar`);
    case "Backreference":
      throw new Refused(`the back-reference ${node.raw} ${at(node)} is not regular enough for a grammar`);
    default:
      throw new Refused(`${(node as AST.Node).raw} ${at(node as AST.Node)} is not supported`);
  }
}

/** The pattern's tree, or why it cannot be written as a grammar. */
export function patternTree(pattern: string): PatternTree | { refused: string } {
  let ast: AST.Pattern;
  try {
    ast = parseEcmaPattern(pattern);
  } catch (error) {
    return { refused: `not a valid pattern with the u flag: ${(error as Error).message}` };
  }
  try {
    const starts: boolean[] = [];
    const ends: boolean[] = [];
    const options = ast.alternatives.map((alternative) => {
      let elements = alternative.elements;
      const first = elements[0];
      const start = first?.type === "Assertion" && first.kind === "start";
      if (start) elements = elements.slice(1);
      const last = elements[elements.length - 1];
      const end = last?.type === "Assertion" && last.kind === "end";
      if (end) elements = elements.slice(0, -1);
      starts.push(start);
      ends.push(end);
      return sequence(elements);
    });
    // `^a$|^b$` is fine; `^a|b` anchors only one alternative, which the grammar does not model.
    if (new Set(starts).size > 1 || new Set(ends).size > 1) throw new Refused("anchors on only some alternatives");
    return { node: options.length === 1 ? options[0]! : { kind: "alt", options }, anchoredStart: starts[0]!, anchoredEnd: ends[0]! };
  } catch (error) {
    if (error instanceof Refused) return { refused: error.message };
    throw error;
  }
}
