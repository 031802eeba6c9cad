// ECMAScript regular-expression syntax, shared by the pattern engine (RE2 translation) and the
// grammar compiler (GBNF): one parser (regexpp, the `u` flag that JSON Schema validators use) and the
// character sets of the escapes, whose meaning both must reproduce exactly.
// Plain JavaScript, browser-safe: the schema worker and the playground load it.
import { RegExpParser } from "@eslint-community/regexpp";

/** `\d`. */
export const DIGIT = [[0x30, 0x39]];
/** `\w` (ASCII: no `i` flag). */
export const WORD = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
/** ECMAScript's `\s`: its WhiteSpace (Unicode Zs included) and LineTerminator code points. */
export const SPACE = [
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
/** What `.` leaves out without the `s` flag. */
export const LINE_TERMINATORS = [
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
];

const parser = new RegExpParser({ ecmaVersion: 2025 });

/**
 * The syntax tree of a JSON Schema `pattern` (ECMA-262 with the `u` flag). Throws a SyntaxError
 * (message without regexpp's "Invalid regular expression: " prefix) when it is not valid.
 * @param {string} source
 */
export function parseEcmaPattern(source) {
  try {
    return parser.parsePattern(source, 0, source.length, { unicode: true });
  } catch (error) {
    throw new SyntaxError(String(error.message).replace(/^Invalid regular expression: /, ""));
  }
}
