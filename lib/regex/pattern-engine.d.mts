/** Types of pattern-engine.mjs (plain JavaScript, loaded as it is by the schema worker). */
export type PatternTranslation =
  | { ok: true; re2: string }
  | {
      ok: false;
      /** The pattern is not valid ECMAScript (`u` flag) at all. */
      invalid: boolean;
      /** What RE2 cannot run: "backreference", "lookaround", "count", "property", "modifiers", "re2", "syntax". */
      feature: string;
      reason: string;
    };
export function translatePattern(source: string): PatternTranslation;
export function schemaRegExp(source: string): { test(value: string): boolean };
