/** Types of ecma-syntax.mjs (plain JavaScript, loaded as it is by the schema worker). */
import type { AST } from "@eslint-community/regexpp";

/** Inclusive code-point ranges. */
export type CodePointRanges = readonly (readonly [number, number])[];
export const DIGIT: CodePointRanges;
export const WORD: CodePointRanges;
export const SPACE: CodePointRanges;
export const LINE_TERMINATORS: CodePointRanges;
/** The syntax tree of a JSON Schema `pattern` (`u` flag); throws a SyntaxError when it is not valid. */
export function parseEcmaPattern(source: string): AST.Pattern;
