import "server-only";
import { jsonEqual } from "../json/json-equal.mjs";
import { resolveLocalRef } from "../json/pointer";
import { schemaRegExp } from "../regex/pattern-engine.mjs";
import { isObject, satisfiesLocally, type Schema, schemaMap } from "./keywords";
import { VALIDATED_FORMATS } from "./vocabulary";

/** true, false, or undefined: "cannot be sure here" (the validator decides). */
export type Verdict = boolean | undefined;

/** Nesting of subschemas (through references too) past which a verdict is not attempted. */
const MAX_DEPTH = 48;
/** Subschema checks one verdict may make (branching references could otherwise multiply them). */
const MAX_STEPS = 10_000;

/**
 * Keywords whose meaning depends on the draft (which the compiler is not told) or on state this
 * evaluation does not keep: where one appears, the verdict is left to the validator.
 */
const UNDECIDED = ["$dynamicRef", "$recursiveRef", "unevaluatedProperties", "unevaluatedItems", "prefixItems", "dependentRequired", "dependentSchemas", "minContains", "maxContains", "$data"];

/**
 * Whether a JSON value satisfies a schema, decided as ajv (genserve's validator) decides it, or
 * `undefined` where this cannot be sure: a format the validator checks, references other than
 * local JSON Pointers, nested `$id`s, draft-dependent keywords, or nesting past a bound.
 *
 * The compiler uses it for finite domains: the values of an `enum` or `const` are checked against
 * every sibling keyword (`not`, `if`/`then`/`else`, `uniqueItems`, `multipleOf`, `contains`…), so
 * the grammar lists exactly the values that validate, and such a node needs no validation after.
 */
export function decide(value: unknown, schema: unknown, root: unknown): Verdict {
  return new Decider(root).check(value, schema, 0);
}

class Decider {
  private steps = 0;

  constructor(private readonly root: unknown) {}

  check(value: unknown, schema: unknown, depth: number): Verdict {
    if (schema === true) return true;
    if (schema === false) return false;
    if (!isObject(schema)) return undefined;
    if (depth > MAX_DEPTH || ++this.steps > MAX_STEPS) return undefined;
    // A nested resource (pointers inside it may be relative to it), and ajv's OpenAPI `nullable`
    // (which changes what `type` allows): no verdict at all.
    if (schema !== this.root && (typeof schema.$id === "string" || typeof schema.id === "string")) return undefined;
    if (schema.nullable === true) return undefined;

    const verdicts: Verdict[] = [];
    const all = () => and(verdicts);
    const add = (v: Verdict) => {
      verdicts.push(v);
      return v === false;
    };
    // Keywords left to the validator make the verdict uncertain, unless another keyword fails.
    if (UNDECIDED.some((k) => Object.hasOwn(schema, k))) add(undefined);
    if (typeof schema.format === "string" && VALIDATED_FORMATS.has(schema.format)) add(undefined);
    if ("contentMediaType" in schema || "contentEncoding" in schema) add(undefined);

    if (typeof schema.$ref === "string") {
      const target = resolveLocalRef(this.root, schema.$ref);
      if (add(target === undefined ? undefined : this.check(value, target.value, depth + 1))) return false;
    }
    // type, enum, const, bounds, lengths, pattern, counts and required: the checks the compiler
    // already makes on enum values (keywords.ts).
    if (add(satisfiesLocally(value, schema))) return false;
    if (Array.isArray(value) && add(this.array(value, schema, depth))) return false;
    if (isObject(value) && add(this.object(value, schema, depth))) return false;

    const sub = (s: unknown) => this.check(value, s, depth + 1);
    if (Array.isArray(schema.allOf) && add(and(schema.allOf.map(sub)))) return false;
    if (Array.isArray(schema.anyOf) && add(or(schema.anyOf.map(sub)))) return false;
    if (Array.isArray(schema.oneOf) && add(exactlyOne(schema.oneOf.map(sub)))) return false;
    if ("not" in schema && add(negate(sub(schema.not)))) return false;
    if ("if" in schema) {
      const condition = sub(schema.if);
      const then = "then" in schema ? sub(schema.then) : true;
      const otherwise = "else" in schema ? sub(schema.else) : true;
      const v = condition === true ? then : condition === false ? otherwise : then === otherwise ? then : undefined;
      if (add(v)) return false;
    }
    return all();
  }

  private array(value: unknown[], schema: Schema, depth: number): Verdict {
    if (schema.uniqueItems === true) {
      for (let i = 0; i < value.length; i++) for (let j = i + 1; j < value.length; j++) if (jsonEqual(value[i], value[j])) return false;
    }
    const verdicts: Verdict[] = [];
    const { items } = schema;
    // Beside prefixItems (2020-12), items covers only the elements after the prefix, and beside
    // minContains/maxContains, contains may need any number of matches (0 too): their failures here
    // would be wrong, so those keywords are left to the validator (already undecided above).
    if ("prefixItems" in schema) {
      verdicts.push(undefined);
    } else if (Array.isArray(items)) {
      // A tuple (draft-04 to 2019-09), then additionalItems for the rest.
      value.forEach((item, i) => {
        if (i < items.length) verdicts.push(this.check(item, items[i], depth + 1));
        else if ("additionalItems" in schema) verdicts.push(this.check(item, schema.additionalItems, depth + 1));
      });
    } else if (items !== undefined) {
      for (const item of value) verdicts.push(this.check(item, items, depth + 1));
    }
    if ("contains" in schema && !("minContains" in schema) && !("maxContains" in schema)) verdicts.push(or(value.map((item) => this.check(item, schema.contains, depth + 1))));
    return and(verdicts);
  }

  private object(value: Schema, schema: Schema, depth: number): Verdict {
    const keys = Object.keys(value);
    const verdicts: Verdict[] = [];
    const properties = schemaMap(schema.properties);
    const patterns = Object.entries(schemaMap(schema.patternProperties));
    for (const key of keys) {
      let described: Verdict = false;
      if (Object.hasOwn(properties, key)) {
        described = true;
        verdicts.push(this.check(value[key], properties[key], depth + 1));
      }
      for (const [pattern, sub] of patterns) {
        const matched = test(pattern, key);
        if (matched === undefined) return undefined;
        if (matched) {
          described = true;
          verdicts.push(this.check(value[key], sub, depth + 1));
        }
      }
      if (!described && "additionalProperties" in schema) verdicts.push(this.check(value[key], schema.additionalProperties, depth + 1));
      if ("propertyNames" in schema) verdicts.push(this.check(key, schema.propertyNames, depth + 1));
    }
    if (isObject(schema.dependencies)) {
      for (const [key, dependency] of Object.entries(schema.dependencies)) {
        if (!Object.hasOwn(value, key)) continue;
        if (Array.isArray(dependency)) verdicts.push(dependency.every((k) => typeof k === "string" && Object.hasOwn(value, k)));
        else verdicts.push(this.check(value, dependency, depth + 1));
      }
    }
    return and(verdicts);
  }
}

function test(pattern: string, text: string): Verdict {
  try {
    return schemaRegExp(pattern).test(text);
  } catch {
    return undefined;
  }
}

const and = (verdicts: Verdict[]): Verdict => (verdicts.includes(false) ? false : verdicts.includes(undefined) ? undefined : true);
const or = (verdicts: Verdict[]): Verdict => (verdicts.includes(true) ? true : verdicts.includes(undefined) ? undefined : false);
const negate = (v: Verdict): Verdict => (v === undefined ? undefined : !v);

function exactlyOne(verdicts: Verdict[]): Verdict {
  const passed = verdicts.filter((v) => v === true).length;
  if (passed > 1) return false;
  if (verdicts.includes(undefined)) return undefined;
  return passed === 1;
}
