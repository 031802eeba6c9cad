import "server-only";
import { decide } from "./decide";
import { finiteValues } from "./finite-values";
import type { GrammarBuilder } from "./grammar-builder";
import { isObject, schemaMap, type Schema } from "./keywords";
import { type BranchShape, exclusiveBranches } from "./one-of";
import { inline, merge } from "./references";
import { ANNOTATIONS, possibleTypes } from "./vocabulary";

/** anyOf and oneOf: one alternative per branch, oneOf's branches first narrowed apart (one-of.ts). */

/** The alternatives of the schema's anyOf (else oneOf), or undefined when it has neither. */
export function branchesRule(v: GrammarBuilder, schema: Schema, path: string, hint: string): string | null | undefined {
  for (const key of ["anyOf", "oneOf"] as const) {
    if (!Array.isArray(schema[key])) continue;
    const { [key]: branches, ...rest } = schema;
    // Siblings that constrain (`{type: object, required: […], anyOf: […]}`) are merged into each
    // branch; without them a branch is visited as it is, so `$ref` branches stay rule references
    // (recursive schemas would otherwise be unrolled).
    const constrained = Object.keys(rest).some((k) => !ANNOTATIONS.has(k));
    const at = (i: number) => `${path}/${key}/${i}`;
    let visited = (branches as unknown[]).map((branch, i) => (constrained ? merge(v, [rest, inline(v, branch, at(i))], at(i)) : (branch as Schema | boolean)));
    if (key === "oneOf") {
      // oneOf: branches narrowed so that no value can match two of them (one-of.ts).
      const resolved = constrained ? visited : visited.map((branch, i) => inline(v, branch, at(i)));
      const apart = exclusiveBranches(resolved, {
        shape: (branch) => branchShape(v, branch),
        values: (branch) => finiteValues(v, branch, path),
        decide: (value, branch) => decide(value, branch, v.root),
      });
      if (apart === undefined) v.note("oneOf (branches may overlap)", path);
      else visited = visited.map((branch, i) => (apart[i] === resolved[i] ? branch : apart[i]!));
    }
    const options = visited.map((branch, i) => v.visit(branch, at(i), `${hint}-${i}`)).filter((expr): expr is string => expr !== null);
    return options.length ? v.rule(hint, options.join(" | ")) : null;
  }
  return undefined;
}

/** What a branch's values look like, for telling oneOf branches apart (one-of.ts). */
function branchShape(v: GrammarBuilder, schema: Schema | boolean): BranchShape {
  const types = possibleTypes(schema);
  if (!isObject(schema) || !types.includes("object")) return { types };
  const properties = schemaMap(schema.properties);
  const required = Array.isArray(schema.required) ? schema.required.map(String) : [];
  const always = new Set(required);
  for (const key of ["dependentRequired", "dependencies"]) {
    const deps = schema[key];
    if (isObject(deps)) for (const dep of Object.values(deps)) if (Array.isArray(dep)) dep.forEach((d) => always.add(String(d)));
  }
  const values = new Map<string, unknown[]>();
  // A superset of a property's values: its const or enum, or those of one of its allOf parts
  // (merged siblings come out as allOf). Every value written or allowed is among them.
  const known = (sub: unknown, depth = 0): unknown[] | undefined => {
    const target = inline(v, sub, "");
    if (!isObject(target)) return undefined;
    if ("const" in target) return [target.const];
    if (Array.isArray(target.enum)) return target.enum;
    if (!Array.isArray(target.allOf) || depth > 8) return undefined;
    for (const part of target.allOf) {
      const found = known(part, depth + 1);
      if (found) return found;
    }
    return undefined;
  };
  for (const [name, sub] of Object.entries(properties)) {
    const found = known(sub);
    if (found) values.set(name, found);
  }
  const generated = [...new Set([...Object.keys(properties).filter((k) => properties[k] !== false), ...always])];
  // Keys may also come from subschemas the grammar merges in, a map's or a pattern's keys.
  const schemaDependencies = ["dependencies", "dependentSchemas"].some((k) => isObject(schema[k]) && Object.values(schema[k] as Schema).some((d) => !Array.isArray(d)));
  const open =
    schemaDependencies ||
    ["allOf", "anyOf", "oneOf", "$ref", "if", "then", "else", "patternProperties"].some((k) => k in schema) ||
    (generated.length === 0 && schema.additionalProperties !== false);
  return { types, object: { generated, open, required, always: [...always], values } };
}
