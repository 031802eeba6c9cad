import "server-only";
import { arrayRule } from "./array-rules";
import { branchesRule } from "./combinator-rules";
import { conditionRule, dependenciesRule } from "./conditional-rules";
import { enumRule, finiteDomain } from "./finite-values";
import { GrammarBuilder, GrammarTooLarge, UnsatisfiableSchemaError } from "./grammar-builder";
import { isObject, type Schema } from "./keywords";
import { numberRule } from "./number-rules";
import { objectRule } from "./object-rules";
import { inline, merge, refRule, resolve } from "./references";
import { stringRule } from "./string-rules";
import { ANNOTATIONS, declaredTypes, inferredTypes, UNEXPRESSED } from "./vocabulary";

/**
 * The recursive visit of a schema: bounded in depth and work, then each keyword in turn — finite
 * values, conditions, `$ref`, allOf, dependencies, anyOf/oneOf, enum/const, and the types, each
 * written by its own module (finite-values, conditional-rules, references, combinator-rules,
 * string-rules, number-rules, object-rules, array-rules) through the rule table (grammar-builder.ts).
 */

/** Nesting beyond this (pathological schemas) is generated as any JSON and left to validation. */
const MAX_DEPTH = 64;
/**
 * Subschema visits one compilation may make. Recursive references under `allOf` can make the
 * visits grow exponentially with depth without adding rules (a Handwritten benchmark schema never
 * finished); past this the schema is constrained as any JSON and left to validation.
 */
const MAX_VISITS = 20_000;

export class SchemaVisitor extends GrammarBuilder {
  private depth = 0;
  private visits = 0;

  /** The whole grammar. Throws UnsatisfiableSchemaError when no value fits, GrammarTooLarge past the budgets. */
  compile(): string {
    const rootExpr = this.visit(this.root, "", "value");
    if (rootExpr === null) throw new UnsatisfiableSchemaError("the schema admits no value");
    return this.render(rootExpr);
  }

  visit(schema: unknown, path: string, hint: string): string | null {
    if (this.depth >= MAX_DEPTH) {
      this.note("nesting depth", path);
      return this.primitive("value");
    }
    if (++this.visits > MAX_VISITS) throw new GrammarTooLarge();
    this.depth++;
    try {
      return this.visitSchema(schema, path, hint);
    } finally {
      this.depth--;
    }
  }

  private visitSchema(schema: unknown, path: string, hint: string): string | null {
    if (schema === true) return this.primitive("value");
    if (schema === false) return null;
    if (!isObject(schema)) return this.primitive("value");
    const finite = finiteDomain(this, schema, hint);
    if (finite !== undefined) return finite;

    if ("if" in schema) {
      const conditional = conditionRule(this, schema, path, hint);
      if (conditional !== undefined) return conditional;
    }
    // uniqueItems is noted where arrays are written (array-rules.ts), which can express it for finite
    // items; dependentSchemas where dependencies are applied (below).
    for (const keyword of UNEXPRESSED) if (keyword in schema && keyword !== "uniqueItems" && keyword !== "dependentSchemas") this.note(keyword, path);

    if (typeof schema.$ref === "string") {
      const { $ref, ...siblings } = schema;
      const hasSiblings = Object.keys(siblings).some((k) => !ANNOTATIONS.has(k));
      if (!hasSiblings) return refRule(this, $ref, path);
      const target = resolve(this, $ref, path);
      if (target === null) return this.visit(siblings, path, hint);
      return this.visit(merge(this, [siblings, target], path), path, hint);
    }
    if (Array.isArray(schema.allOf)) {
      const { allOf, ...rest } = schema;
      const parts = (allOf as unknown[]).map((s) => inline(this, s, path));
      return this.visit(merge(this, [rest, ...parts], path), path, hint);
    }
    const dependent = dependenciesRule(this, schema, path, hint);
    if (dependent !== undefined) return dependent;
    const branches = branchesRule(this, schema, path, hint);
    if (branches !== undefined) return branches;
    const listed = enumRule(this, schema, path, hint);
    if (listed !== undefined) return listed;

    const types = declaredTypes(schema) ?? inferredTypes(schema);
    if (!types) {
      if (schema.uniqueItems === true) this.note("uniqueItems", path);
      return this.primitive("value");
    }
    const options: string[] = [];
    for (const type of types.includes("number") ? types.filter((t) => t !== "integer") : types) {
      const expr = this.visitType(type, schema, path, types.length > 1 ? `${hint}-${type}` : hint);
      if (expr !== null) options.push(expr);
    }
    if (!options.length) return null;
    return options.length === 1 ? options[0]! : this.rule(hint, options.join(" | "));
  }

  private visitType(type: string, schema: Schema, path: string, hint: string): string | null {
    switch (type) {
      case "string":
        return stringRule(this, schema, path, hint);
      case "integer":
      case "number":
        return numberRule(this, type, schema, path, hint);
      case "boolean":
      case "null":
        return this.primitive(type);
      case "object":
        return objectRule(this, schema, path, hint);
      case "array":
        return arrayRule(this, schema, path, hint);
      default:
        return null;
    }
  }
}
