/**
 * Differential fuzzing of the JSON Schema → GBNF compiler against the validator.
 *
 * An exact grammar claims that every text it allows is JSON that the schema accepts. For one schema,
 * `fuzzSchema` checks that claim two ways, with llama.cpp's own grammar engine and genserve's own
 * validator (the production worker, same options) as the judges:
 *   - walks: random texts the grammar allows (see GrammarChecker.sample); each must parse as JSON,
 *     and under an exact grammar each must validate;
 *   - mutants: valid instances (the walks', and any given, such as a benchmark's test instances)
 *     changed a little — a property dropped or added, a value of another type, a number at or past
 *     a bound, a string longer or shorter, an item more or less — and written compactly in the same
 *     key order; every mutant an exact grammar accepts must validate.
 * Any disagreement is a compiler bug (or a keyword combination that must be marked inexact).
 *
 * `randomSchema` makes schemas of the kinds users send, mixed more freely than any real set:
 * every type with its bounds, formats, patterns, enum/const, objects with required keys (declared
 * or not, some named like Object's members), additionalProperties, dependencies, arrays with
 * items/prefixItems/bounds, anyOf/oneOf/allOf, $ref into $defs, and the keywords a grammar cannot
 * express (not, if/then, multipleOf, uniqueItems) to check they are reported rather than ignored,
 * and finite domains (enum, const) beside any of those, which the compiler filters value by value.
 */
import type { LlamaGrammar } from "node-llama-cpp";
import { compileGrammar, UnsatisfiableSchemaError } from "../../lib/grammar/compile";
import type { SchemaCompiler } from "../../lib/schema/validator";
import type { GrammarChecker } from "./grammar-check";
import { setOwn } from "../../lib/json/own";
import type { Random } from "./random";

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const chance = (random: Random, p: number) => random() < p;
const int = (random: Random, min: number, max: number) => min + Math.floor(random() * (max - min + 1));

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, unknown>;

const NAMES = ["a", "b", "id", "name", "kind", "x y", "é", "a/b", "~0", "toString", "__proto__", "constructor", "valueOf", "$ref", "", "0"];
const PATTERNS = [
  "^[a-z]+$",
  "^\\d{3}-\\d{4}$",
  "[A-Z]",
  "^(foo|bar)*$",
  "^.{2,5}$",
  "a|b",
  "^[^\\s@]+@[^\\s@]+\\.[a-z]{2,}$",
  "^\\w*$",
  "^$",
  "^(?:[01]\\d|2[0-3]):[0-5]\\d$",
  "^\\p{Lu}\\p{Ll}*$",
  "x*y?",
  "^[\\u0041-\\u005A]{1,3}$",
  "^-?\\d+(\\.\\d+)?$",
  "\\.",
  "^(a|ab)(c|bcd)$",
];
const FORMATS = ["date", "date-time", "time", "email", "uuid", "ipv4", "ipv6", "uri", "uri-reference", "url", "hostname", "duration", "json-pointer", "byte", "regex"];

function literal(random: Random, depth = 0): Json {
  switch (int(random, 0, depth > 1 ? 4 : 6)) {
    case 0:
      return null;
    case 1:
      return chance(random, 0.5);
    case 2:
      return pick(random, [0, 1, -1, 2.5, 1e21, -0.5, 9007199254740993]);
    case 3:
    case 4:
      return pick(random, ["", "a", "A b", "é", '"', "\\", "\n", "toString", "__proto__"]);
    case 5:
      return [literal(random, depth + 1)];
    default:
      return { [pick(random, NAMES)]: literal(random, depth + 1) };
  }
}

function stringSchema(random: Random): Schema {
  const s: Schema = { type: "string" };
  if (chance(random, 0.3)) s.minLength = int(random, 0, 4);
  if (chance(random, 0.3)) s.maxLength = int(random, 0, 12);
  if (chance(random, 0.25)) s.pattern = pick(random, PATTERNS);
  else if (chance(random, 0.2)) s.format = pick(random, FORMATS);
  if (chance(random, 0.1)) s.enum = [pick(random, ["a", "bb", "é", "toString"]), pick(random, ["", "ccc", "A"])];
  return s;
}

function numberSchema(random: Random): Schema {
  const s: Schema = { type: pick(random, ["integer", "number"]) };
  const bound = () => pick(random, [0, 1, -1, 3, 10, 100, -7, 2.5, 0.1, 1e6]);
  if (chance(random, 0.4)) s.minimum = bound();
  if (chance(random, 0.4)) s.maximum = bound();
  if (chance(random, 0.2)) s.exclusiveMinimum = bound();
  if (chance(random, 0.2)) s.exclusiveMaximum = bound();
  if (chance(random, 0.08)) s.multipleOf = pick(random, [2, 0.5, 3]);
  return s;
}

function objectSchema(random: Random, depth: number, defs: string[]): Schema {
  const properties: Schema = {};
  const count = int(random, 0, 4);
  for (let i = 0; i < count; i++) properties[pick(random, NAMES)] = randomSubschema(random, depth + 1, defs);
  const s: Schema = { type: "object", properties };
  const names = Object.keys(properties);
  if (names.length > 0 || chance(random, 0.2)) {
    const required = names.filter(() => chance(random, 0.5));
    if (chance(random, 0.15)) required.push(pick(random, NAMES)); // perhaps undeclared
    s.required = [...new Set(required)];
  }
  const additional = random();
  if (additional < 0.35) s.additionalProperties = false;
  else if (additional < 0.5) s.additionalProperties = randomSubschema(random, depth + 1, defs);
  if (chance(random, 0.08) && names.length >= 2) s.dependencies = { [names[0]!]: [names[1]!] };
  else if (chance(random, 0.06) && names.length >= 1) s.dependencies = { [names[0]!]: randomSubschema(random, depth + 1, defs) };
  if (chance(random, 0.05)) s.minProperties = int(random, 0, 2);
  if (chance(random, 0.05)) s.patternProperties = { "^x-": { type: "string" } };
  return s;
}

function arraySchema(random: Random, depth: number, defs: string[]): Schema {
  const s: Schema = { type: "array" };
  if (chance(random, 0.8)) s.items = randomSubschema(random, depth + 1, defs);
  if (chance(random, 0.3)) s.prefixItems = [randomSubschema(random, depth + 1, defs), randomSubschema(random, depth + 1, defs)];
  if (chance(random, 0.35)) s.minItems = int(random, 0, 3);
  if (chance(random, 0.35)) s.maxItems = int(random, 0, 4);
  if (chance(random, 0.08)) {
    s.uniqueItems = true;
    // Items of a few known values, which the grammar writes distinct.
    if (chance(random, 0.5)) s.items = pick(random, [{ enum: [literal(random), literal(random), literal(random), "a"] }, { type: "boolean" }, { enum: [1, 1.0, 2, [1], { a: 1 }] }]);
  }
  return s;
}

function randomSubschema(random: Random, depth: number, defs: string[]): Schema | boolean {
  const roll = random();
  if (depth >= 4 || roll < 0.3) {
    switch (int(random, 0, 8)) {
      case 0:
        return stringSchema(random);
      case 1:
        return numberSchema(random);
      case 2:
        return { type: pick(random, ["boolean", "null", ["string", "null"], ["integer", "string"]]) };
      case 3:
        return { const: literal(random) };
      case 4:
        return { enum: [literal(random), literal(random), literal(random)] };
      case 5:
        return defs.length > 0 ? { $ref: `#/$defs/${pick(random, defs)}` } : stringSchema(random);
      case 6:
        return chance(random, 0.5) ? {} : true;
      case 7:
        // Schemas no value satisfies, which the grammar must leave out rather than half-express.
        return pick(random, [false, { allOf: [{ type: "string" }, { type: "integer" }] }, { type: "string", minLength: 3, maxLength: 1 }, { type: "array", minItems: 2, maxItems: 1 }, { enum: [] }, { type: "integer", minimum: 2, maximum: 1 }]);
      default:
        return stringSchema(random);
    }
  }
  if (roll < 0.55) return objectSchema(random, depth, defs);
  if (roll < 0.7) return arraySchema(random, depth, defs);
  if (roll < 0.85) {
    const keyword = pick(random, ["anyOf", "oneOf", "allOf"]);
    return { [keyword]: Array.from({ length: int(random, 1, 3) }, () => randomSubschema(random, depth + 1, defs)) };
  }
  const base = randomSubschema(random, depth + 1, defs);
  const extra = pick(random, ["not", "if", "type-list", "nullable-ref", "finite", "finite-allOf", "union", "union"]);
  if (extra === "union") return unionSchema(random, depth, defs);
  if (extra === "not") return { ...(typeof base === "object" ? base : {}), not: { const: literal(random) } };
  if (extra === "finite" || extra === "finite-allOf") {
    // A finite domain beside keywords a grammar cannot express: the compiler filters the values.
    const values = Array.from({ length: int(random, 1, 4) }, () => literal(random));
    const sibling = pick(random, [
      { not: base },
      { if: base, then: randomSubschema(random, depth + 1, defs), else: randomSubschema(random, depth + 1, defs) },
      { uniqueItems: true },
      { contains: base },
      { multipleOf: pick(random, [2, 0.5, 0.1]) },
      { propertyNames: { maxLength: 1 } },
      { oneOf: [base, randomSubschema(random, depth + 1, defs)] },
    ]);
    return extra === "finite" ? { enum: values, ...sibling } : { allOf: [{ enum: values }, sibling] };
  }
  if (extra === "if") {
    // A condition on a discriminator (required or not, a const or an enum), the key's own values
    // known or not, then/else of required keys or random subschemas.
    const kinds = ["a", "b", "c"];
    const s: Schema = { type: "object", properties: { kind: chance(random, 0.7) ? { enum: kinds } : { type: "string" }, a: stringSchema(random), b: numberSchema(random) } };
    if (chance(random, 0.5)) s.required = ["kind"];
    const test = chance(random, 0.5) ? { const: pick(random, kinds) } : { enum: kinds.filter(() => chance(random, 0.5)) };
    s.if = { properties: { kind: test }, ...(chance(random, 0.5) ? { required: ["kind"] } : {}) };
    const branch = () => (chance(random, 0.6) ? { required: [pick(random, ["a", "b", "kind"])] } : randomSubschema(random, depth + 1, defs));
    if (chance(random, 0.8)) s.then = branch();
    if (chance(random, 0.7)) s.else = branch();
    return s;
  }
  if (extra === "type-list") return { type: ["object", "null"], properties: { a: stringSchema(random) } };
  return { anyOf: [base, { type: "null" }] };
}

/**
 * A oneOf whose branches may overlap, of the shapes the compiler narrows apart: objects with a
 * `kind` (const or enum, optional or required), branches that only require a key, objects without
 * a type, finite branches with shared values; sometimes under constraining siblings.
 */
function unionSchema(random: Random, depth: number, defs: string[]): Schema {
  const kinds = ["a", "b", "c"];
  const objectBranch = (): Schema => {
    const s: Schema = {};
    if (chance(random, 0.7)) s.type = "object";
    const properties: Schema = {};
    if (chance(random, 0.7)) properties.kind = chance(random, 0.5) ? { const: pick(random, kinds) } : { enum: kinds.filter(() => chance(random, 0.6)) };
    for (const name of NAMES.filter(() => chance(random, 0.15))) properties[name] = randomSubschema(random, depth + 1, defs);
    if (Object.keys(properties).length > 0 || chance(random, 0.5)) s.properties = properties;
    const required = Object.keys(properties).filter(() => chance(random, 0.4));
    if (chance(random, 0.3)) required.push(pick(random, NAMES));
    if (required.length > 0) s.required = [...new Set(required)];
    if (chance(random, 0.25)) s.additionalProperties = false;
    if (chance(random, 0.1)) s.dependencies = { [pick(random, NAMES)]: [pick(random, NAMES)] };
    return s;
  };
  const branch = (): Schema | boolean => {
    const roll = random();
    if (roll < 0.55) return objectBranch();
    if (roll < 0.7) return { required: [pick(random, NAMES)] };
    if (roll < 0.85) return pick(random, [{ enum: ["a", "b", 1, null] }, { enum: ["b", true] }, { const: "a" }, { type: "boolean" }, { type: "null" }, { enum: [{ a: 1, b: 2 }, { b: 2, a: 1 }] }]);
    return randomSubschema(random, depth + 1, defs);
  };
  const s: Schema = { oneOf: Array.from({ length: int(random, 2, 3) }, branch) };
  if (chance(random, 0.4)) {
    s.type = "object";
    s.properties = { kind: { type: "string" }, [pick(random, NAMES)]: stringSchema(random) };
    if (chance(random, 0.4)) s.required = ["kind"];
    if (chance(random, 0.3)) s.additionalProperties = false;
  }
  return s;
}

/** A random schema for genserve's top level (an object or an array), perhaps with $defs. */
export function randomSchema(random: Random): Schema {
  const defs: string[] = [];
  const $defs: Schema = {};
  if (chance(random, 0.25)) {
    for (const name of ["node", pick(random, ["toString", "x", "Item"])]) {
      defs.push(name);
      $defs[name] = randomSubschema(random, 2, defs.slice(0, -1));
    }
  }
  const root = chance(random, 0.8) ? objectSchema(random, 0, defs) : arraySchema(random, 0, defs);
  if (defs.length > 0) root.$defs = $defs;
  if (chance(random, 0.5)) root.$schema = "https://json-schema.org/draft/2020-12/schema";
  return root;
}

/** Small changes to a valid value, each a whole new value (the input is not changed). */
export function mutants(value: Json, random: Random, count: number): Json[] {
  const out: Json[] = [];
  for (let i = 0; i < count; i++) out.push(mutate(structuredClone(value), random));
  return out;
}

function mutate(value: Json, random: Random): Json {
  // Walk down to a random place, then change what is there.
  if (value !== null && typeof value === "object" && chance(random, 0.6)) {
    if (Array.isArray(value)) {
      if (value.length > 0 && chance(random, 0.7)) {
        const i = int(random, 0, value.length - 1);
        value[i] = mutate(value[i]!, random);
        return value;
      }
    } else {
      const keys = Object.keys(value);
      if (keys.length > 0 && chance(random, 0.7)) {
        const key = pick(random, keys);
        setOwn(value, key, mutate(value[key]!, random));
        return value;
      }
    }
  }
  return change(value, random);
}

function change(value: Json, random: Random): Json {
  if (Array.isArray(value)) {
    const copy = [...value];
    switch (int(random, 0, 3)) {
      case 0:
        copy.pop();
        return copy;
      case 1:
        return [...copy, copy.length > 0 ? structuredClone(pick(random, copy)) : literal(random)];
      case 2:
        return [...copy, literal(random)];
      default:
        return other(random);
    }
  }
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value);
    switch (int(random, 0, 2)) {
      case 0: {
        if (keys.length === 0) return other(random);
        const drop = pick(random, keys);
        const copy: { [key: string]: Json } = {};
        for (const k of keys) if (k !== drop) setOwn(copy, k, value[k]);
        return copy;
      }
      case 1: {
        const copy: { [key: string]: Json } = {};
        for (const k of keys) setOwn(copy, k, value[k]);
        setOwn(copy, pick(random, NAMES), literal(random));
        return copy;
      }
      default:
        return other(random);
    }
  }
  if (typeof value === "number") {
    return pick(random, [value + 1, value - 1, value + 0.5, -value, value * 10, value / 3, 0, 1e300, -1e-7, Math.trunc(value) + 1e16]);
  }
  if (typeof value === "string") {
    return pick(random, ["", value + value, value.slice(1), value + "x", value.toUpperCase(), value.replace(/./, "!"), "x".repeat(40), value + "\u00e9", value.slice(0, -1)]);
  }
  return other(random);
}

function other(random: Random): Json {
  return pick(random, [null, true, false, 0, -3, 2.5, "", "text", [], {}, [1], { a: 1 }] as Json[]);
}

export interface Disagreement {
  schema: unknown;
  text: string;
  /** not-json: a walk that does not parse; invalid: an exact grammar allowed an invalid value; stuck: a dead end in the grammar; error: llama.cpp refused the grammar, or the fuzzed code threw. */
  kind: "not-json" | "invalid" | "stuck" | "error";
  detail: string;
}

export interface FuzzStats {
  schemas: number;
  exact: number;
  walks: number;
  walksUnfinished: number;
  mutants: number;
  mutantsAccepted: number;
  disagreements: Disagreement[];
}

export const emptyStats = (): FuzzStats => ({ schemas: 0, exact: 0, walks: 0, walksUnfinished: 0, mutants: 0, mutantsAccepted: 0, disagreements: [] });

export interface FuzzOptions {
  checker: GrammarChecker;
  validator: SchemaCompiler;
  random: Random;
  walks: number;
  mutantsPerValue: number;
  /** Further valid instances to mutate (a benchmark's test instances). */
  instances?: Json[];
}

/**
 * Fuzzes one schema into `stats`. Schemas genserve refuses, or that no value satisfies, are
 * skipped (not counted); grammars that are not exact are counted but only checked for producing
 * JSON, since validation is their second half by design.
 */
export async function fuzzSchema(schema: unknown, options: FuzzOptions, stats: FuzzStats): Promise<void> {
  const { checker, validator, random } = options;
  let prepared;
  try {
    prepared = await validator.prepare(schema);
  } catch {
    return; // refused with a 400: not the compiler's business
  }
  let compiled;
  try {
    compiled = compileGrammar(schema as Schema);
  } catch (error) {
    if (error instanceof UnsatisfiableSchemaError) return;
    throw error;
  }
  let grammar: LlamaGrammar;
  try {
    grammar = await checker.grammar(compiled.gbnf);
  } catch (error) {
    stats.disagreements.push({ schema, text: compiled.gbnf.slice(0, 2000), kind: "error", detail: `llama.cpp refused the grammar: ${(error as Error).message}` });
    return;
  }
  stats.schemas++;
  if (compiled.exact) stats.exact++;
  const valid: Json[] = [];
  for (let i = 0; i < options.walks; i++) {
    const walk = checker.sample(grammar, random);
    if (walk === null) {
      stats.walksUnfinished++;
      continue;
    }
    stats.walks++;
    if ("stuck" in walk) {
      stats.disagreements.push({ schema, text: walk.stuck, kind: "stuck", detail: "the grammar allowed this prefix, then nothing" });
      continue;
    }
    let value: Json;
    try {
      value = JSON.parse(walk.text) as Json;
    } catch (error) {
      stats.disagreements.push({ schema, text: walk.text, kind: "not-json", detail: (error as Error).message });
      continue;
    }
    const verdict = await prepared.validate(value);
    if (verdict.valid) valid.push(value);
    else if (compiled.exact) stats.disagreements.push({ schema, text: walk.text, kind: "invalid", detail: JSON.stringify(verdict.errors.slice(0, 3)) });
  }
  if (!compiled.exact) return;
  for (const base of [...valid, ...(options.instances ?? [])]) {
    for (const mutant of mutants(base, random, options.mutantsPerValue)) {
      const text = JSON.stringify(mutant);
      if (text === undefined) continue;
      stats.mutants++;
      if (!checker.accepts(grammar, text)) continue;
      stats.mutantsAccepted++;
      const verdict = await prepared.validate(JSON.parse(text));
      if (!verdict.valid) stats.disagreements.push({ schema, text, kind: "invalid", detail: JSON.stringify(verdict.errors.slice(0, 3)) });
    }
  }
}
