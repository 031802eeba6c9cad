import "server-only";
import { type Schema } from "./keywords";
import { PRIMITIVE_DEPS, PRIMITIVES } from "./vocabulary";

/**
 * What every construct's module (string-rules.ts, object-rules.ts, …) writes a grammar through: the
 * rule table with its names, the notes of what was left to validation, and the recursive visit
 * (schema-visitor.ts) for subschemas. One per compilation.
 */

/** Over a work or size budget: the schema is constrained as any JSON instead (compile.ts). */
export class GrammarTooLarge extends Error {}

/** Raised for schemas that admit no value at all (e.g. `false`, empty enum): nothing to generate. */
export class UnsatisfiableSchemaError extends Error {}

/** A grammar with more rules than this is not built (the schema is constrained as any JSON). */
const MAX_RULES = 4000;

export abstract class GrammarBuilder {
  private readonly rules = new Map<string, string>();
  private readonly byBody = new Map<string, string>();
  /** `$ref` → the name of its rule (references.ts). */
  readonly refs = new Map<string, string>();
  readonly unexpressed = new Set<string>();

  constructor(readonly root: Schema | boolean) {}

  /** A GBNF expression for values of `schema`, or null when no value is allowed. */
  abstract visit(schema: unknown, path: string, hint: string): string | null;

  /** The grammar text: `root ::= rootExpr`, then every rule in the order it was added. */
  protected render(rootExpr: string): string {
    const lines = [`root ::= ${rootExpr}`];
    for (const [name, body] of this.rules) lines.push(`${name} ::= ${body}`);
    return `${lines.join("\n")}\n`;
  }

  note(keyword: string, path: string) {
    this.unexpressed.add(`${keyword} at ${path || "/"}`);
  }

  primitive(name: string): string {
    if (!this.rules.has(name)) {
      this.rules.set(name, PRIMITIVES[name]!);
      for (const dep of PRIMITIVE_DEPS[name] ?? []) this.primitive(dep);
      if (name === "object" || name === "array") this.primitive("ws");
    }
    return name;
  }

  /** Adds (or reuses) a rule with this body and returns its name. */
  rule(hint: string, body: string): string {
    const existing = this.byBody.get(body);
    if (existing) return existing;
    if (this.rules.size >= MAX_RULES) throw new GrammarTooLarge();
    const name = this.freshName(hint);
    this.rules.set(name, body);
    this.byBody.set(body, name);
    return name;
  }

  freshName(hint: string): string {
    const base = (hint.replace(/[^a-zA-Z0-9-]+/g, "-").replace(/^-+|-+$/g, "").toLowerCase() || "r").slice(0, 40);
    let name = /^[a-z]/.test(base) ? base : `r-${base}`;
    if (PRIMITIVES[name] !== undefined || this.rules.has(name) || name === "root") {
      let i = 2;
      while (this.rules.has(`${name}-${i}`)) i++;
      name = `${name}-${i}`;
    }
    return name;
  }

  /** Sets a named rule's body directly (not shared by body): a reference's rule, reserved before its body is known. */
  define(name: string, body: string) {
    this.rules.set(name, body);
  }

  /** Removes a reserved rule whose body turned out to admit no value. */
  undefine(name: string) {
    this.rules.delete(name);
  }
}
