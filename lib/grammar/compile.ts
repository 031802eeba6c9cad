/**
 * JSON Schema → GBNF, for schema-constrained decoding on the local engine.
 *
 * The grammar is built to be *sound*: every text it allows parses as JSON and satisfies the
 * keywords it expresses. Where a schema allows more than one spelling (whitespace, property
 * order, extra properties the schema tolerates but does not describe), the grammar picks the
 * natural subset: declared properties in declaration order, compact whitespace. Keywords the
 * grammar cannot express (uniqueItems over open item sets, not, if/then/else, multipleOf, bounds
 * finer than 5 digits…) are listed in `unexpressed`; the run then uses mode "grammar+validate" and
 * the usual validation and retry decide. `exact` means nothing was left out, so every output validates.
 *
 * The compiler is one recursive visit (schema-visitor.ts) over a rule table shared by every visit
 * (grammar-builder.ts); each construct is written by a module of its own: strings (string-rules.ts),
 * numbers (number-rules.ts), objects (object-rules.ts), arrays (array-rules.ts), anyOf/oneOf
 * (combinator-rules.ts), `$ref` and allOf (references.ts), dependencies and if/then/else
 * (conditional-rules.ts), enum and const (finite-values.ts). Beside them: the keyword tables and type
 * helpers (vocabulary.ts), allOf merging (merge.ts), single-keyword checks (keywords.ts), regex,
 * number ranges and formats.
 */
import "server-only";
import { GrammarTooLarge } from "./grammar-builder";
import { SchemaVisitor } from "./schema-visitor";
import { type Schema } from "./keywords";

export { UnsatisfiableSchemaError } from "./grammar-builder";

export interface CompiledGrammar {
  gbnf: string;
  /** True when every keyword was expressed: outputs need no validation to follow the schema. */
  exact: boolean;
  /** What the grammar left to validation, as `keyword at /json/pointer`. */
  unexpressed: string[];
  /** Set when the schema's own grammar was not built (over a work or time budget): why. */
  fallback?: string;
}

/**
 * A grammar longer than this is not built either: llama.cpp parses a grammar on the server's thread
 * when it is first used (about 15 ms for 400 KB here), so its size is bounded like the compiler's own work.
 */
const MAX_GBNF_CHARS = 512 * 1024;

/** Compiles a JSON Schema into a GBNF grammar. Throws UnsatisfiableSchemaError when no value fits. */
export function compileGrammar(schema: Schema | boolean): CompiledGrammar {
  const compiler = new SchemaVisitor(schema);
  let gbnf: string;
  try {
    gbnf = compiler.compile();
    if (gbnf.length > MAX_GBNF_CHARS) throw new GrammarTooLarge();
  } catch (error) {
    if (!(error instanceof GrammarTooLarge)) throw error;
    return anyValueGrammar("grammar size");
  }
  const unexpressed = [...compiler.unexpressed];
  return { gbnf, exact: unexpressed.length === 0, unexpressed };
}

/** The grammar of any JSON value, for a schema whose own grammar was not built: validation and retry decide. */
export function anyValueGrammar(reason: string): CompiledGrammar {
  const compiler = new SchemaVisitor(true);
  return { gbnf: compiler.compile(), exact: false, unexpressed: [reason], fallback: reason };
}
