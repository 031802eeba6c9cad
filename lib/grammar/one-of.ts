import "server-only";
import type { Verdict } from "./decide";
import { jsonEqual } from "../json/json-equal.mjs";
import { isObject, type Schema } from "./keywords";
import { inferredTypes } from "./vocabulary";

/**
 * `oneOf` made exact: every value generated for one branch must fail all the others, or a value
 * valid for two of them would come out, which the schema refuses. Where branches may overlap, each
 * one is narrowed to a sound subset that is apart from the others, the way discriminated unions
 * are written by hand:
 *
 * - **values** — a branch of few known values (an enum or const, boolean, null) keeps those that
 *   every other branch refuses (`oneOf: [{$ref: colors}, {enum: [blue, 6]}]`);
 * - **a discriminator** — a key whose const/enum values differ between two branches is always
 *   written (`kind: "a"` against `kind: "b"`, optional in the schema);
 * - **absence** — a key another branch requires is never written
 *   (`oneOf: [{required: [ssn]}, {required: [ein]}]`: the first writes no `ein`).
 *
 * What a branch writes is read from the narrowed branch (the grammar's), what another branch
 * refuses from that branch as the schema has it (the validator's). Where no such narrowing keeps
 * branches apart (two patterns that may match the same string, overlapping numeric ranges), the
 * caller leaves `oneOf` to validation.
 */

export interface BranchShape {
  /** The JSON types the branch allows. */
  types: string[];
  /** Branches that allow objects: what their objects look like. */
  object?: {
    /** Keys the grammar may write (all of them unless `open`). */
    generated: string[];
    /** The grammar may write keys not in `generated` (a map, or keys from a pattern). */
    open: boolean;
    /** Keys the schema requires (what the validator checks). */
    required: string[];
    /** Keys the grammar always writes: the required ones and those property dependencies name. */
    always: string[];
    /** A superset of the values of declared properties, where few are known (const, enum). */
    values: Map<string, unknown[]>;
  };
}

export interface OneOfTools {
  shape(branch: Schema | boolean): BranchShape;
  /** The values a branch allows when they are few and known exactly, else undefined. */
  values(branch: Schema | boolean): unknown[] | undefined;
  /** Whether a value satisfies a branch, as the validator decides (undefined: not sure). */
  decide(value: unknown, branch: Schema | boolean): Verdict;
}

interface Side {
  schema: Schema | boolean;
  shape: BranchShape;
  values: unknown[] | undefined;
}

/**
 * Branches to generate from, each a sound subset of its own, so that each one's values fail every
 * other branch; the same array when they already are apart; undefined when they cannot be made so.
 */
export function exclusiveBranches(branches: readonly (Schema | boolean)[], tools: OneOfTools): (Schema | boolean)[] | undefined {
  const side = (schema: Schema | boolean): Side => ({ schema, shape: tools.shape(schema), values: tools.values(schema) });
  const original = branches.map(side);
  const generated = [...original];
  for (let i = 0; i < generated.length; i++) {
    for (let j = 0; j < original.length; j++) {
      if (i === j) continue;
      // Narrowing only removes values, so branches already apart from this one stay apart.
      for (let step = 0; !apart(generated[i]!, original[j]!, tools); step++) {
        const narrowed = step < 4 ? narrow(generated[i]!, original[j]!, tools) : undefined;
        if (narrowed === undefined) return undefined;
        generated[i] = side(narrowed);
      }
    }
  }
  return generated.every((g, i) => g === original[i]) ? [...branches] : generated.map((g) => g.schema);
}

/** Whether every value generated from `mine` fails `theirs` (as the schema has it). */
function apart(mine: Side, theirs: Side, tools: OneOfTools): boolean {
  const expand = (types: string[]) => new Set(types.flatMap((t) => (t === "number" ? ["number", "integer"] : [t])));
  const their = expand(theirs.shape.types);
  if (![...expand(mine.shape.types)].some((t) => their.has(t))) return true;
  if (theirs.values !== undefined && theirs.values.every((v) => tools.decide(v, mine.schema) === false)) return true;
  if (mine.values !== undefined && mine.values.every((v) => tools.decide(v, theirs.schema) === false)) return true;
  const a = writtenObject(mine);
  const b = theirs.shape.object;
  if (!a || !b) return false;
  if (!a.open && b.required.some((k) => !a.generated.includes(k))) return true;
  return a.always.some((k) => differ(a.values.get(k), b.values.get(k)));
}

/** `mine` narrowed so that its values fail `theirs`, or undefined. */
function narrow(mine: Side, theirs: Side, tools: OneOfTools): Schema | boolean | undefined {
  const schema = mine.schema;
  if (mine.values !== undefined && isObject(schema)) {
    // Values the other branch may accept (or that cannot be decided) are dropped.
    const kept = mine.values.filter((v) => tools.decide(v, theirs.schema) === false);
    if (kept.length === 0) return false;
    const { const: _const, ...rest } = schema;
    return { ...rest, enum: kept };
  }
  if (!isObject(schema)) return undefined;
  // `{properties: …}` without a type: the grammar writes objects only; saying so lets them be told apart.
  if (schema.type === undefined && mine.shape.types.length > 1 && mine.shape.object && inferredTypes(schema)?.join() === "object") return { ...schema, type: "object" };
  const a = writtenObject(mine);
  const b = theirs.shape.object;
  if (!a || !b || a.open) return undefined;
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const discriminator = a.generated.find((k) => !a.always.includes(k) && differ(a.values.get(k), b.values.get(k)));
  if (discriminator !== undefined) return { ...schema, required: [...required, discriminator] };
  // A key the other requires, never written here: one not declared here is preferred (nothing lost).
  const absent = b.required.filter((k) => !a.always.includes(k));
  const key = absent.find((k) => !Object.hasOwn(properties, k)) ?? absent[0];
  if (key !== undefined) return { ...schema, properties: { ...properties, [key]: false } };
  return undefined;
}

/** What a branch's objects look like, when objects are all it writes (else what it writes is not only objects). */
function writtenObject(side: Side): BranchShape["object"] {
  return side.shape.types.every((t) => t === "object") ? side.shape.object : undefined;
}

/** Whether no value written (from `written`) is among those `allowed`; false when either is unknown. */
function differ(written: unknown[] | undefined, allowed: unknown[] | undefined): boolean {
  return written !== undefined && allowed !== undefined && !written.some((v) => allowed.some((w) => jsonEqual(v, w)));
}
