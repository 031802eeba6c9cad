// JSON Schema `pattern`s on a linear-time engine. A pattern is ECMA-262 syntax with the `u` flag
// (what ajv and every JavaScript validator run); it is parsed by regexpp (ecma-syntax.mjs, the
// parser the grammar compiler shares) and written out in RE2 syntax with the same meaning, then
// compiled by re2js, whose matching time is linear in the input whatever the pattern. The
// translation spells out what the two dialects read differently: `.` and `\s` / `\S` follow
// ECMAScript (RE2's `.` matches \r and U+2028, its `\s` lacks \v, U+00A0 and the other Unicode
// spaces), characters are written as code points, and groups become non-capturing (only `test` is
// ever asked).
//
// What RE2 cannot run (back-references, lookahead and lookbehind, counts above 1,000, property
// names it does not know) is reported with the feature and its place, so the caller can decide: run
// it on JavaScript's engine after a ReDoS analysis (server), or say which part is not linear.
// Plain JavaScript, browser-safe: the schema worker, the screening and the playground load it.
import { RE2JS } from "re2js";
import { DIGIT, LINE_TERMINATORS, parseEcmaPattern, SPACE, WORD } from "./ecma-syntax.mjs";

/** RE2's largest repetition count. */
const MAX_COUNT = 1000;

/** Unicode property names and values ECMAScript accepts that RE2 spells without the `Name=` part. */
const PROPERTY_KEYS = new Set(["General_Category", "gc", "Script", "sc"]);

class NotLinear extends Error {
  /** @param {string} feature @param {string} message */
  constructor(feature, message) {
    super(message);
    this.feature = feature;
  }
}

const hex = (cp) => `\\x{${cp.toString(16)}}`;
const ranges = (list) => list.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join("");
function complement(list) {
  const out = [];
  let next = 0;
  for (const [a, b] of list) {
    if (a > next) out.push([next, a - 1]);
    next = b + 1;
  }
  if (next <= 0x10ffff) out.push([next, 0x10ffff]);
  return out;
}

/** The members of a class for one escape (`\d`, `\s`, `\p{L}`…), written for use inside `[...]`. */
function setInClass(node, at) {
  switch (node.kind) {
    case "digit":
      return ranges(node.negate ? complement(DIGIT) : DIGIT);
    case "word":
      return ranges(node.negate ? complement(WORD) : WORD);
    case "space":
      return ranges(node.negate ? complement(SPACE) : SPACE);
    case "property": {
      if (node.strings) throw new NotLinear("property", `the string property \\p{${node.key}} at ${at(node)} has no RE2 equivalent`);
      const name = node.value === null || PROPERTY_KEYS.has(node.key) ? (node.value ?? node.key) : null;
      if (name === null) throw new NotLinear("property", `the property \\p{${node.key}=${node.value}} at ${at(node)} has no RE2 equivalent`);
      return `${node.negate ? "\\P" : "\\p"}{${name}}`;
    }
    default:
      throw new NotLinear("syntax", `unexpected ${node.raw} at ${at(node)}`);
  }
}

function emit(node, at) {
  switch (node.type) {
    case "Pattern":
    case "Group":
    case "CapturingGroup": {
      if (node.type === "Group" && node.modifiers) throw new NotLinear("modifiers", `the modifier group ${node.raw.slice(0, 8)}… at ${at(node)} has no RE2 equivalent here`);
      const body = node.alternatives.map((a) => emit(a, at)).join("|");
      return node.type === "Pattern" ? body : `(?:${body})`;
    }
    case "Alternative":
      return node.elements.map((e) => emit(e, at)).join("");
    case "Character":
      return hex(node.value);
    case "CharacterSet":
      if (node.kind === "any") return `[${ranges(complement(LINE_TERMINATORS))}]`;
      return `[${setInClass(node, at)}]`;
    case "CharacterClass": {
      if (node.unicodeSets) throw new NotLinear("syntax", `set notation at ${at(node)}`);
      const members = node.elements
        .map((e) => {
          if (e.type === "Character") return hex(e.value);
          if (e.type === "CharacterClassRange") return `${hex(e.min.value)}-${hex(e.max.value)}`;
          if (e.type === "CharacterSet") return setInClass(e, at);
          throw new NotLinear("syntax", `unexpected ${e.raw} in a class at ${at(e)}`);
        })
        .join("");
      // RE2 has no empty class: [] matches nothing and [^] anything.
      if (members === "") return node.negate ? `[\\x{0}-\\x{10ffff}]` : `[^\\x{0}-\\x{10ffff}]`;
      return `[${node.negate ? "^" : ""}${members}]`;
    }
    case "Quantifier": {
      const { min, max } = node;
      if (min > MAX_COUNT || (max !== Infinity && max > MAX_COUNT)) {
        throw new NotLinear("count", `the count {${min},${max === Infinity ? "" : max}} at ${at(node)} is above RE2's ${MAX_COUNT}`);
      }
      const inner = `(?:${emit(node.element, at)})`;
      if (max === Infinity) return min === 0 ? `${inner}*` : min === 1 ? `${inner}+` : `${inner}{${min},}`;
      return min === max ? `${inner}{${min}}` : `${inner}{${min},${max}}`;
    }
    case "Assertion":
      if (node.kind === "start") return "^";
      if (node.kind === "end") return "$";
      if (node.kind === "word") return node.negate ? "\\B" : "\\b";
      throw new NotLinear("lookaround", `the ${node.kind} ${node.raw.slice(0, 12)}${node.raw.length > 12 ? "…" : ""} at ${at(node)} needs a backtracking engine`);
    case "Backreference":
      throw new NotLinear("backreference", `the back-reference ${node.raw} at ${at(node)} needs a backtracking engine`);
    default:
      throw new NotLinear("syntax", `unexpected ${node.raw} at ${at(node)}`);
  }
}

/**
 * Reads an ECMAScript pattern (`u` flag) and translates it to RE2.
 * @param {string} source
 * @returns {{ ok: true, re2: string } | { ok: false, invalid: boolean, feature: string, reason: string }}
 */
export function translatePattern(source) {
  let ast;
  try {
    ast = parseEcmaPattern(source);
  } catch (error) {
    return { ok: false, invalid: true, feature: "syntax", reason: String(error.message) };
  }
  const at = (node) => `offset ${node.start}`;
  try {
    const re2 = emit(ast, at);
    RE2JS.compile(re2);
    return { ok: true, re2 };
  } catch (error) {
    if (error instanceof NotLinear) return { ok: false, invalid: false, feature: error.feature, reason: error.message };
    // RE2's own limits (program size) or a property name it does not know.
    return { ok: false, invalid: false, feature: "re2", reason: String(error.message) };
  }
}

/** Compiled patterns, by source: schemas repeat the same few patterns. */
const cache = new Map();

/**
 * The `test`-able matcher ajv uses for a schema pattern (its `code.regExp` option): RE2 when the
 * pattern translates, else JavaScript's RegExp — only for patterns the screening let through after
 * a ReDoS analysis, and still inside the schema worker's time limit.
 * @param {string} source
 * @returns {{ test(value: string): boolean }}
 */
export function schemaRegExp(source) {
  let matcher = cache.get(source);
  if (matcher) return matcher;
  const translated = translatePattern(source);
  if (translated.ok) {
    const compiled = RE2JS.compile(translated.re2);
    // ajv keys compiled patterns by their text (`toString`), as it would a RegExp's.
    matcher = { test: (value) => compiled.test(value), toString: () => `/${source}/u (re2)` };
  } else {
    matcher = new RegExp(source, "u");
  }
  if (cache.size >= 2_000) cache.delete(cache.keys().next().value);
  cache.set(source, matcher);
  return matcher;
}
