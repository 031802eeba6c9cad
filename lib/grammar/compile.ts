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
 * The compiler is one recursive visitor (one class) because every visit shares its rule table,
 * rule names and notes; what needs none of them lives beside it: the keyword tables and type
 * helpers (vocabulary.ts), allOf merging (merge.ts), single-keyword checks (keywords.ts), regex,
 * number ranges and formats.
 */
import "server-only";
import { jsonStringChar, literal, MAX_REPEAT, repeat } from "./gbnf";
import { FORMATS } from "./formats";
import { integerRange, numberRange } from "./numbers";
import { isObject, jsonType, schemaMap, LOCALLY_CHECKED, numericBounds, safeTest, satisfiesLocally, type Schema } from "./keywords";
import { boundedPatternToGbnf, patternToGbnf, singleClassPattern } from "./regex";
import { mergeAllOf } from "./merge";
import { decide } from "./decide";
import { type BranchShape, exclusiveBranches } from "./one-of";
import { jsonEqual } from "../json/json-equal.mjs";
import { ANNOTATIONS, declaredTypes, inferredTypes, possibleTypes, PRIMITIVE_DEPS, PRIMITIVES, UNEXPRESSED, VALIDATED_FORMATS, VALIDATION_KEYWORDS } from "./vocabulary";
import { escapePointerSegment, resolveLocalRef } from "../json/pointer";


export interface CompiledGrammar {
  gbnf: string;
  /** True when every keyword was expressed: outputs need no validation to follow the schema. */
  exact: boolean;
  /** What the grammar left to validation, as `keyword at /json/pointer`. */
  unexpressed: string[];
  /** Set when the schema's own grammar was not built (over a work or time budget): why. */
  fallback?: string;
}

class GrammarTooLarge extends Error {}

/** Raised for schemas that admit no value at all (e.g. `false`, empty enum): nothing to generate. */
export class UnsatisfiableSchemaError extends Error {}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
/** `uniqueItems` is written into the grammar for item sets of at most this many known values. */
const MAX_DISTINCT_VALUES = 12;
/** Length ranges up to MAX_CHUNKS × MAX_REPEAT are written out exactly. */
const MAX_CHUNKS = 8;
/** A grammar with more rules than this is not built (the schema is constrained as any JSON). */
const MAX_RULES = 4000;
/**
 * Nor one longer than this: llama.cpp parses a grammar on the server's thread when it is first
 * used (about 15 ms for 400 KB here), so its size is bounded like the compiler's own work.
 */
const MAX_GBNF_CHARS = 512 * 1024;
/** Nesting beyond this (pathological schemas) is generated as any JSON and left to validation. */
const MAX_DEPTH = 64;
/**
 * Subschema visits one compilation may make. Recursive references under `allOf` can make the
 * visits grow exponentially with depth without adding rules (a Handwritten benchmark schema never
 * finished); past this the schema is constrained as any JSON and left to validation.
 */
const MAX_VISITS = 20_000;

class Compiler {
  private readonly rules = new Map<string, string>();
  private readonly byBody = new Map<string, string>();
  private readonly refs = new Map<string, string>();
  readonly unexpressed = new Set<string>();

  constructor(private readonly root: Schema | boolean) {}

  compile(): string {
    const rootExpr = this.visit(this.root, "", "value");
    if (rootExpr === null) throw new UnsatisfiableSchemaError("the schema admits no value");
    const lines = [`root ::= ${rootExpr}`];
    for (const [name, body] of this.rules) lines.push(`${name} ::= ${body}`);
    return `${lines.join("\n")}\n`;
  }

  private note(keyword: string, path: string) {
    this.unexpressed.add(`${keyword} at ${path || "/"}`);
  }

  private primitive(name: string): string {
    if (!this.rules.has(name)) {
      this.rules.set(name, PRIMITIVES[name]!);
      for (const dep of PRIMITIVE_DEPS[name] ?? []) this.primitive(dep);
      if (name === "object" || name === "array") this.primitive("ws");
    }
    return name;
  }

  /** Adds (or reuses) a rule with this body and returns its name. */
  private rule(hint: string, body: string): string {
    const existing = this.byBody.get(body);
    if (existing) return existing;
    if (this.rules.size >= MAX_RULES) throw new GrammarTooLarge();
    const name = this.freshName(hint);
    this.rules.set(name, body);
    this.byBody.set(body, name);
    return name;
  }

  private freshName(hint: string): string {
    const base = (hint.replace(/[^a-zA-Z0-9-]+/g, "-").replace(/^-+|-+$/g, "").toLowerCase() || "r").slice(0, 40);
    let name = /^[a-z]/.test(base) ? base : `r-${base}`;
    if (PRIMITIVES[name] !== undefined || this.rules.has(name) || name === "root") {
      let i = 2;
      while (this.rules.has(`${name}-${i}`)) i++;
      name = `${name}-${i}`;
    }
    return name;
  }

  private resolve(ref: string, path: string): Schema | boolean | null {
    if (!ref.startsWith("#")) {
      this.note("$ref (not local)", path);
      return null;
    }
    // "#name" names a schema by its anchor (`$anchor`, or an `id`/`$id` of "#name"), not by pointer:
    // left to validation rather than resolved here (found by the grammar fuzzer: resolved as a
    // pointer, it pointed at the root).
    if (ref !== "#" && !ref.startsWith("#/")) {
      this.note("$ref (anchor)", path);
      return null;
    }
    const node = resolveLocalRef(this.root, ref)?.value;
    if (isObject(node) || typeof node === "boolean") return node;
    this.note("$ref (unresolved)", path);
    return null;
  }

  /**
   * An enum's or const's values that validate, each checked against every keyword beside it by the
   * validator's rules (decide.ts): exact whatever those keywords are (not, if/then/else,
   * uniqueItems, multipleOf…). Undefined when a verdict is uncertain; the usual path then applies.
   */
  private finiteDomain(schema: Schema, hint: string): string | null | undefined {
    const values = Object.hasOwn(schema, "const") ? [schema.const] : Array.isArray(schema.enum) ? schema.enum : undefined;
    const kept = values && this.validValues(values, schema);
    if (!kept) return undefined;
    if (kept.length === 0) return null;
    return kept.length === 1 ? this.literalValue(kept[0]) : this.rule(hint, kept.map((v) => this.literalValue(v)).join(" | "));
  }

  /**
   * Schema-valued dependencies ("if a is present, the object must also match S"): S is applied
   * whether or not `a` is written, which satisfies the dependency either way (a sound subset, as
   * property dependencies are made required). Should that leave no value where the schema allows
   * one, the dependency is left to validation instead. Undefined when there are none.
   */
  private withDependencies(schema: Schema, path: string, hint: string): string | null | undefined {
    const found: [string, string, unknown][] = [];
    for (const key of ["dependencies", "dependentSchemas"] as const) {
      const deps = schema[key];
      if (!isObject(deps)) continue;
      for (const [name, dep] of Object.entries(deps)) if (!Array.isArray(dep)) found.push([key, name, dep]);
    }
    if (found.length === 0) return undefined;
    const rest: Schema = { ...schema };
    delete rest.dependentSchemas;
    if (isObject(schema.dependencies)) {
      const arrays = Object.entries(schema.dependencies).filter(([, dep]) => Array.isArray(dep));
      if (arrays.length > 0) rest.dependencies = Object.fromEntries(arrays);
      else delete rest.dependencies;
    }
    // A property the grammar never writes triggers nothing: applied are the dependencies of keys
    // declared or required, then of those that applying them declares or requires, until none is
    // added. Where keys may come from elsewhere (a branch, a reference, a map's or a pattern's keys),
    // every dependency applies.
    const opaque = (node: Schema | boolean) =>
      !isObject(node) ||
      isObject(node.additionalProperties) ||
      "patternProperties" in node ||
      ["allOf", "anyOf", "oneOf", "$ref", "if", "then", "else", "dependencies", "dependentSchemas"].some((k) => k in node);
    const written = (node: Schema | boolean) =>
      isObject(node) ? new Set([...(isObject(node.properties) ? Object.keys(node.properties) : []), ...(Array.isArray(node.required) ? node.required.map(String) : [])]) : new Set<string>();
    const apply = (list: typeof found) => list.map(([, name, dep]) => (dep === false ? { properties: { [name]: false } } : (dep as Schema | boolean)));
    let triggered = opaque(rest) ? found : found.filter(([, name]) => written(rest).has(name));
    let merged = this.merge([rest, ...apply(triggered)], path);
    for (;;) {
      const waiting = found.filter((f) => !triggered.includes(f));
      const names = written(merged);
      const more = opaque(merged) ? waiting : waiting.filter(([, name]) => names.has(name));
      if (more.length === 0) break;
      triggered = [...triggered, ...more];
      merged = this.merge([rest, ...apply(triggered)], path);
    }
    if (triggered.length === 0) return this.visit(rest, path, hint);
    const expr = this.visit(merged, path, hint);
    if (expr !== null) return expr;
    for (const [key] of triggered) this.note(`${key} (schema)`, path);
    return this.visit(rest, path, hint);
  }

  /**
   * `if`/`then`/`else` on a discriminator (`if: {properties: {kind: {const: "a"}}, required: ["kind"]}`)
   * as two branches told apart by that key: the condition with `then`; and `else` with the key
   * absent (where the condition requires it) or holding one of its other known values. Each branch
   * is a sound subset (its values meet the condition, or fail it). Undefined for other conditions,
   * which are left to validation.
   */
  private withCondition(schema: Schema, path: string, hint: string): string | null | undefined {
    const { if: condition, then: whenTrue = true, else: whenFalse = true, ...base } = schema;
    if (!isObject(condition)) return undefined;
    const keywords = Object.keys(condition).filter((k) => !ANNOTATIONS.has(k));
    if (!keywords.every((k) => k === "properties" || k === "required" || (k === "type" && condition.type === "object"))) return undefined;
    const tested = Object.entries(schemaMap(condition.properties));
    if (tested.length !== 1 || Object.keys(condition.properties as Schema).length !== 1) return undefined;
    const [key, test] = tested[0]!;
    const values = isObject(test) ? (Object.hasOwn(test, "const") ? [test.const] : Array.isArray(test.enum) ? test.enum : undefined) : undefined;
    const required = Array.isArray(condition.required) ? condition.required : [];
    if (values === undefined || !required.every((r) => r === key)) return undefined;
    let fails: Schema | undefined;
    if (required.includes(key)) fails = { type: "object", properties: { [key]: false } };
    else {
      // The key written with a value the condition refuses: one of the schema's own known values for it.
      const declared = isObject(base.properties) && Object.hasOwn(base.properties, key) ? this.finiteValues(base.properties[key], path) : undefined;
      const others = declared?.filter((v) => !values.some((c) => jsonEqual(c, v)));
      if (others?.length) fails = { type: "object", properties: { [key]: { enum: others } }, required: [key] };
    }
    if (fails === undefined) return undefined;
    const options = [
      this.visit(this.merge([base, condition, whenTrue as Schema | boolean], path), `${path}/then`, `${hint}-then`),
      this.visit(this.merge([base, whenFalse as Schema | boolean, fails], path), `${path}/else`, `${hint}-else`),
    ].filter((expr): expr is string => expr !== null);
    return options.length ? this.rule(hint, options.join(" | ")) : null;
  }

  /**
   * The values a schema allows when they are few and known exactly: an enum or const (filtered as in
   * finiteDomain), a boolean or null type, behind plain references. Undefined otherwise.
   */
  private finiteValues(schema: unknown, path: string): unknown[] | undefined {
    let node = schema;
    for (let hops = 0; isObject(node) && typeof node.$ref === "string" && Object.keys(node).every((k) => k === "$ref" || ANNOTATIONS.has(k)); hops++) {
      const target = hops < 16 ? this.resolve(node.$ref, path) : null;
      if (target === null) return undefined;
      node = target;
    }
    if (node === false) return [];
    if (!isObject(node)) return undefined;
    const candidates = Object.hasOwn(node, "const") ? [node.const] : Array.isArray(node.enum) ? node.enum : node.type === "boolean" ? [false, true] : node.type === "null" ? [null] : undefined;
    return candidates && this.validValues(candidates, node);
  }

  /** The candidates that validate against `node` (decide.ts), without repeats; undefined when a verdict is uncertain. */
  private validValues(candidates: readonly unknown[], node: Schema): unknown[] | undefined {
    const kept: unknown[] = [];
    for (const value of candidates) {
      const verdict = decide(value, node, this.root);
      if (verdict === undefined) return undefined;
      if (verdict && !kept.some((k) => jsonEqual(k, value))) kept.push(value);
    }
    return kept;
  }

  /**
   * `uniqueItems` over a few known item values: the arrays of distinct values in their declared
   * order (a sound subset: any order would do), min..max of them. One rule per (next value, count).
   */
  private distinctList(items: unknown, min: number, max: number | undefined, path: string, hint: string): string | null | undefined {
    const values = this.finiteValues(items ?? true, `${path}/items`);
    if (values === undefined || values.length > MAX_DISTINCT_VALUES) return undefined;
    const n = values.length;
    const hi = Math.min(max ?? n, n);
    if (min > hi) return null;
    const literals = values.map((v) => this.literalValue(v));
    // after[i][k]: the rest of the array once k values are written, the next one chosen from index i on.
    const after: (string | null)[][] = Array.from({ length: n + 1 }, () => []);
    for (let i = n; i >= 0; i--) {
      for (let k = hi; k >= 1; k--) {
        const options = k >= min ? ['"]"'] : [];
        if (k < hi) {
          for (let j = i; j < n; j++) {
            const rest = after[j + 1]![k + 1];
            if (rest) options.push(`"," ws ${literals[j]} ${rest}`);
          }
        }
        after[i]![k] = options.length ? this.rule(`${hint}-distinct`, options.join(" | ")) : null;
      }
    }
    const first = min === 0 ? ['"]"'] : [];
    for (let j = 0; j < n && hi >= 1; j++) {
      const rest = after[j + 1]![1];
      if (rest) first.push(`${literals[j]} ${rest}`);
    }
    return first.length ? this.rule(hint, `"[" ws (${first.join(" | ")})`) : null;
  }

  /** A GBNF expression for values of `schema`, or null when no value is allowed. */
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

  private depth = 0;
  private visits = 0;

  private visitSchema(schema: unknown, path: string, hint: string): string | null {
    if (schema === true) return this.primitive("value");
    if (schema === false) return null;
    if (!isObject(schema)) return this.primitive("value");
    const finite = this.finiteDomain(schema, hint);
    if (finite !== undefined) return finite;

    if ("if" in schema) {
      const conditional = this.withCondition(schema, path, hint);
      if (conditional !== undefined) return conditional;
    }
    // uniqueItems is noted where arrays are written (visitArray), which can express it for finite
    // items; dependentSchemas where dependencies are applied (below).
    for (const keyword of UNEXPRESSED) if (keyword in schema && keyword !== "uniqueItems" && keyword !== "dependentSchemas") this.note(keyword, path);

    if (typeof schema.$ref === "string") {
      const { $ref, ...siblings } = schema;
      const hasSiblings = Object.keys(siblings).some((k) => !ANNOTATIONS.has(k));
      if (!hasSiblings) return this.visitRef($ref, path);
      const target = this.resolve($ref, path);
      if (target === null) return this.visit(siblings, path, hint);
      return this.visit(this.merge([siblings, target], path), path, hint);
    }
    if (Array.isArray(schema.allOf)) {
      const { allOf, ...rest } = schema;
      const parts = (allOf as unknown[]).map((s) => this.inline(s, path));
      return this.visit(this.merge([rest, ...parts], path), path, hint);
    }
    const dependent = this.withDependencies(schema, path, hint);
    if (dependent !== undefined) return dependent;
    for (const key of ["anyOf", "oneOf"] as const) {
      if (!Array.isArray(schema[key])) continue;
      const { [key]: branches, ...rest } = schema;
      // Siblings that constrain (`{type: object, required: […], anyOf: […]}`) are merged into each
      // branch; without them a branch is visited as it is, so `$ref` branches stay rule references
      // (recursive schemas would otherwise be unrolled).
      const constrained = Object.keys(rest).some((k) => !ANNOTATIONS.has(k));
      const at = (i: number) => `${path}/${key}/${i}`;
      let visited = (branches as unknown[]).map((branch, i) => (constrained ? this.merge([rest, this.inline(branch, at(i))], at(i)) : (branch as Schema | boolean)));
      if (key === "oneOf") {
        // oneOf: branches narrowed so that no value can match two of them (one-of.ts).
        const resolved = constrained ? visited : visited.map((branch, i) => this.inline(branch, at(i)));
        const apart = exclusiveBranches(resolved, {
          shape: (branch) => this.shape(branch),
          values: (branch) => this.finiteValues(branch, path),
          decide: (value, branch) => decide(value, branch, this.root),
        });
        if (apart === undefined) this.note("oneOf (branches may overlap)", path);
        else visited = visited.map((branch, i) => (apart[i] === resolved[i] ? branch : apart[i]!));
      }
      const options = visited.map((branch, i) => this.visit(branch, at(i), `${hint}-${i}`)).filter((expr): expr is string => expr !== null);
      return options.length ? this.rule(hint, options.join(" | ")) : null;
    }
    if ("const" in schema || Array.isArray(schema.enum)) {
      if (schema.uniqueItems === true) this.note("uniqueItems", path);
    }
    if ("const" in schema) {
      const others = Object.keys(schema).filter((k) => VALIDATION_KEYWORDS.has(k) && k !== "const" && !UNEXPRESSED.includes(k));
      const unchecked = others.filter((k) => !LOCALLY_CHECKED.has(k));
      if (unchecked.length) this.note(`${unchecked.join(", ")} beside const`, path);
      return satisfiesLocally(schema.const, schema) ? this.literalValue(schema.const) : null;
    }
    if (Array.isArray(schema.enum)) {
      // Values the other keywords refuse are dropped; keywords that cannot be checked here are noted.
      const others = Object.keys(schema).filter((k) => VALIDATION_KEYWORDS.has(k) && k !== "enum" && !UNEXPRESSED.includes(k));
      const unchecked = others.filter((k) => !LOCALLY_CHECKED.has(k));
      if (unchecked.length) this.note(`${unchecked.join(", ")} beside enum`, path);
      const values = schema.enum.filter((v) => satisfiesLocally(v, schema));
      if (!values.length) return null;
      return this.rule(hint, values.map((v) => this.literalValue(v)).join(" | "));
    }

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

  private visitRef(ref: string, path: string): string | null {
    const known = this.refs.get(ref);
    if (known) return known;
    const target = this.resolve(ref, path);
    if (target === null) return this.primitive("value");
    // Reserve the name first so recursive references resolve to it.
    const name = this.freshName(ref.split("/").pop() || "ref");
    this.refs.set(ref, name);
    this.rules.set(name, "");
    const body = this.visit(target, ref.slice(1), `${name}-body`);
    if (body === null) {
      this.rules.delete(name);
      this.refs.delete(ref);
      return null;
    }
    this.rules.set(name, body);
    return name;
  }

  /** Follows a pure `$ref` so allOf/anyOf branches can be merged with their siblings. */
  private inline(schema: unknown, path: string, depth = 0): Schema | boolean {
    if (isObject(schema) && typeof schema.$ref === "string" && depth < 16) {
      const { $ref, ...rest } = schema;
      const target = this.resolve($ref, path);
      if (target === null) return rest;
      // Recursive schemas: merging stops at depth 16 and the reference stays a rule reference.
      return Object.keys(rest).length ? this.merge([rest, this.inline(target, path, depth + 1)], path) : this.inline(target, path, depth + 1);
    }
    return isObject(schema) || typeof schema === "boolean" ? schema : {};
  }

  /** allOf semantics for the keywords the grammar uses (merge.ts); what it cannot merge is noted. */
  private merge(parts: (Schema | boolean)[], path: string): Schema | boolean {
    return mergeAllOf(parts, (keyword) => this.note(keyword, path));
  }

  /** What a branch's values look like, for telling oneOf branches apart (one-of.ts). */
  private shape(schema: Schema | boolean): BranchShape {
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
      const target = this.inline(sub, "");
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

  private literalValue(value: unknown): string {
    return literal(JSON.stringify(value));
  }

  private visitType(type: string, schema: Schema, path: string, hint: string): string | null {
    switch (type) {
      case "string":
        return this.visitString(schema, path, hint);
      case "integer":
      case "number":
        return this.visitNumber(type, schema, path, hint);
      case "boolean":
      case "null":
        return this.primitive(type);
      case "object":
        return this.visitObject(schema, path, hint);
      case "array":
        return this.visitArray(schema, path, hint);
      default:
        return null;
    }
  }

  private visitString(schema: Schema, path: string, hint: string): string | null {
    const { format, pattern } = schema;
    const min = typeof schema.minLength === "number" ? schema.minLength : 0;
    const max = typeof schema.maxLength === "number" ? schema.maxLength : undefined;
    if (max !== undefined && min > max) return null; // no string fits (and llama.cpp would hang on `{4,2}`)
    const hasLength = min > 0 || max !== undefined;
    let content: string | null = null;
    if (typeof pattern === "string") {
      const single = hasLength ? singleClassPattern(pattern) : null;
      if (single) {
        // `^[a-z0-9-]+$` with maxLength 64: one class, so the two counts intersect.
        const lo = Math.max(min, single.min);
        const hi = single.max === undefined ? max : max === undefined ? single.max : Math.min(max, single.max);
        if (hi !== undefined && lo > hi) return null;
        const char = jsonStringChar(single.ranges);
        if (char === null) return lo === 0 ? this.rule(hint, '"\\"\\""') : null;
        content = this.lengthRange(this.rule(`${hint}-char`, char), lo, hi, path) || "";
        if (typeof format === "string" && VALIDATED_FORMATS.has(format)) this.note(`format "${format}" with pattern`, path); // found by the grammar fuzzer
        return this.rule(hint, `"\\"" ${content ? `${content} ` : ""}"\\""`);
      }
      // The length counted along the pattern (regex.ts), else left to validation.
      const bounded = hasLength ? boundedPatternToGbnf(pattern, min, max) : null;
      if (bounded === "none") return null;
      content = bounded ?? patternToGbnf(pattern);
      if (content === null) this.note("pattern", path);
      else if (hasLength && bounded === null) this.note("minLength/maxLength with pattern", path);
    }
    if (content === null && typeof format === "string" && VALIDATED_FORMATS.has(format)) {
      content = FORMATS[format] ?? null;
      if (content === null) this.note(`format "${format}"`, path);
      else if (hasLength) this.note("minLength/maxLength with format", path);
    } else if (content !== null && typeof format === "string") this.note(`format "${format}" with pattern`, path);
    if (content === null) {
      if (min === 0 && max === undefined) return this.primitive("string");
      this.primitive("char");
      content = this.lengthRange("char", min, max, path);
    }
    return this.rule(hint, `"\\"" ${content ? `${content} ` : ""}"\\""`);
  }

  /**
   * `item` repeated min..max times. llama.cpp enforces a repetition count up to 2000, so longer
   * ranges are written as consecutive chunks of at most that many. A maximum past MAX_CHUNKS of
   * them is written as MAX_CHUNKS chunks (a sound subset: `maxLength: 65535` lets a model write up
   * to 16,000 characters); a minimum past them is left to validation.
   */
  private lengthRange(item: string, min: number, max: number | undefined, path: string): string {
    const chunks = (n: number) => Math.ceil(n / MAX_REPEAT);
    if (chunks(min) > MAX_CHUNKS) {
      this.note("minLength", path);
      return repeat(item, MAX_REPEAT, undefined); // at least that many; the rest of the minimum is validated
    }
    if (max !== undefined && chunks(max) > MAX_CHUNKS) max = MAX_CHUNKS * MAX_REPEAT;
    const parts: string[] = [];
    let fixed = min;
    while (fixed > MAX_REPEAT) {
      parts.push(repeat(item, MAX_REPEAT, MAX_REPEAT));
      fixed -= MAX_REPEAT;
    }
    if (max === undefined) {
      parts.push(repeat(item, fixed, undefined));
      return parts.filter(Boolean).join(" ");
    }
    // Up to `n` more: a full chunk then the rest, or fewer than a chunk and stop. Unlike chunks
    // side by side, this has one way to split a string, so llama.cpp tracks few parse stacks.
    const upTo = (lo: number, n: number): string => {
      if (n <= MAX_REPEAT) return repeat(item, lo, n);
      const full = `${repeat(item, MAX_REPEAT, MAX_REPEAT)}${n > MAX_REPEAT ? ` ${upTo(0, n - MAX_REPEAT)}` : ""}`;
      return lo >= MAX_REPEAT ? full : `(${full} | ${repeat(item, lo, MAX_REPEAT - 1)})`;
    };
    parts.push(upTo(fixed, max - min + fixed));
    return parts.filter(Boolean).join(" ");
  }

  private visitNumber(declared: string, schema: Schema, path: string, hint: string): string | null {
    const bounds = numericBounds(schema);
    // The validator checks the numeric formats too (ajv-formats): int64 is any integer, int32 one in
    // 32 bits (found by the grammar fuzzer: a 13-digit integer under "format": "int32").
    const type = schema.format === "int32" || schema.format === "int64" ? "integer" : declared;
    if (schema.format === "int32") {
      if (bounds.min === undefined || bounds.min < INT32_MIN) Object.assign(bounds, { min: INT32_MIN, exclusiveMin: false });
      if (bounds.max === undefined || bounds.max > INT32_MAX) Object.assign(bounds, { max: INT32_MAX, exclusiveMax: false });
    }
    const { multipleOf } = schema;
    if (multipleOf !== undefined && !(type === "integer" && multipleOf === 1)) this.note("multipleOf", path);
    const bounded = bounds.min !== undefined || bounds.max !== undefined;
    if (!bounded) return this.primitive(type);
    const expr = type === "integer" ? integerRange(bounds) : numberRange(bounds);
    if (expr === undefined) {
      // Bounds too fine to write digit by digit: leave them to validation.
      this.note("fractional minimum/maximum", path);
      return this.primitive(type);
    }
    if (expr === null) return null;
    return this.rule(hint, expr);
  }

  private visitObject(schema: Schema, path: string, hint: string): string | null {
    this.primitive("ws");
    const properties = schemaMap(schema.properties);
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    // "if a is present, b must be": writing b always satisfies it whatever a does.
    for (const key of ["dependentRequired", "dependencies"]) {
      const deps = schema[key];
      if (!isObject(deps)) continue;
      for (const [name, dep] of Object.entries(deps)) {
        if (Array.isArray(dep)) dep.forEach((d) => required.add(String(d)));
        else if (!Object.hasOwn(properties, name) && !required.has(name)) continue; // never written: nothing to satisfy
        else this.note(`${key} (schema)`, path);
      }
    }
    const additional = schema.additionalProperties;
    const entries: { key: string; value: string; required: boolean }[] = [];
    for (const [key, sub] of Object.entries(properties)) {
      const value = this.visit(sub, `${path}/properties/${escapePointerSegment(key)}`, `${hint}-${key}`);
      if (value === null) {
        if (required.has(key)) return null; // required but no value allowed
        continue; // `false`: the property must be absent, so it is never generated
      }
      entries.push({ key, value, required: required.has(key) });
    }
    for (const key of required) {
      if (Object.hasOwn(properties, key)) continue;
      const value = additional === false ? null : this.visit(isObject(additional) ? additional : true, `${path}/additionalProperties`, `${hint}-extra`);
      if (value === null) return null;
      entries.push({ key, value, required: true });
    }

    const minProperties = typeof schema.minProperties === "number" ? schema.minProperties : 0;
    const maxProperties = typeof schema.maxProperties === "number" ? schema.maxProperties : Infinity;
    if (minProperties > maxProperties) return null; // no object fits
    const requiredCount = entries.filter((e) => e.required).length;
    const patterns = Object.entries(schemaMap(schema.patternProperties));

    if (patterns.length) {
      // Declared keys are written as declared; a declared key that a pattern also matches would have
      // to satisfy both schemas, which is left to validation.
      const matches = (key: string) => patterns.some(([p]) => safeTest(p, key));
      if (entries.some((e) => matches(e.key))) this.note("patternProperties", path);
      if (!entries.length) {
        // Keys from the pattern, values from its schema (the first pattern, when there are several).
        const [pattern, sub] = patterns[0]!;
        if (patterns.length > 1) this.note("patternProperties (several patterns)", path);
        const keyBody = patternToGbnf(pattern);
        const value = keyBody === null ? null : this.visit(sub, `${path}/patternProperties/${escapePointerSegment(pattern)}`, `${hint}-value`);
        if (keyBody === null || value === null) {
          if (keyBody === null) this.note("patternProperties", path);
          if (minProperties > 0) this.note("minProperties", path);
          return this.rule(hint, '"{" ws "}"');
        }
        this.primitive("ws");
        const key = this.rule(`${hint}-key`, `"\\"" ${keyBody} "\\""`);
        return this.mapRule(hint, `${key} ":" ws ${value}`, minProperties, maxProperties, path);
      }
    }

    if (!Object.keys(properties).length && additional !== false && !patterns.length && requiredCount === 0) {
      // A map: any keys, values of the additionalProperties schema.
      const value = this.visit(isObject(additional) ? additional : true, `${path}/additionalProperties`, `${hint}-value`);
      if (value === null) return minProperties > 0 ? null : this.rule(hint, '"{" ws "}"'); // no key may appear (found by the grammar fuzzer)
      this.primitive("ws");
      this.primitive("string");
      return this.mapRule(hint, `string ":" ws ${value}`, minProperties, maxProperties, path);
    }
    return this.recordRule(hint, entries, minProperties, maxProperties, requiredCount, path);
  }

  /** `{ kv, kv, … }` with a count between min and max (repeated keys collapse when parsed). */
  private mapRule(hint: string, kvBody: string, minProperties: number, maxProperties: number, path: string): string {
    this.primitive("ws");
    const kv = this.rule(`${hint}-kv`, kvBody);
    const lo = Math.min(minProperties, MAX_REPEAT);
    const hi = maxProperties === Infinity || maxProperties > MAX_REPEAT ? undefined : maxProperties;
    if (minProperties > MAX_REPEAT || (maxProperties !== Infinity && maxProperties > MAX_REPEAT)) this.note("minProperties/maxProperties", path);
    // Repeated keys collapse when parsed, so only a minimum above one can come out short.
    if (minProperties > 1) this.note("minProperties (keys may repeat)", path);
    if (hi === 0) return this.rule(hint, '"{" ws "}"');
    const more = repeat(`("," ws ${kv})`, Math.max(0, lo - 1), hi === undefined ? undefined : hi - 1);
    const members = `${kv}${more ? ` ${more}` : ""}`;
    return this.rule(hint, `"{" ws ${lo > 0 ? members : `(${members})?`} "}"`);
  }

  /** Declared properties in declared order, optional ones really optional. */
  private recordRule(hint: string, entries: { key: string; value: string; required: boolean }[], minProperties: number, maxProperties: number, requiredCount: number, path: string): string | null {
    if (requiredCount > maxProperties) return null;
    // More properties than are declared would need undeclared ones: left to validation, like a minimum above the required.
    if (minProperties > requiredCount || maxProperties < entries.length) this.note("minProperties/maxProperties", path);
    this.primitive("ws");
    const kvs = entries.map((e) => ({ ...e, kv: `${literal(JSON.stringify(e.key))} ":" ws ${e.value}` }));
    if (!kvs.length) return this.rule(hint, '"{" ws "}"');
    // Declared order. tail(i): properties i.. after at least one was written (each preceded by ",").
    // head(i): properties i.. with none written yet: the first present one has no comma.
    let tail = "";
    const tails: string[] = [];
    for (let i = kvs.length - 1; i >= 1; i--) {
      const { kv, required } = kvs[i]!;
      const item = required ? `"," ws ${kv}` : `("," ws ${kv})?`;
      tail = tail ? this.rule(`${hint}-tail-${i}`, `${item} ${tail}`) : this.rule(`${hint}-tail-${i}`, item);
      tails[i] = tail;
    }
    let head: string | null = null;
    for (let i = kvs.length - 1; i >= 0; i--) {
      const { kv, required } = kvs[i]!;
      const withThis = `${kv}${tails[i + 1] ? ` ${tails[i + 1]}` : ""}`;
      head = this.rule(`${hint}-from-${i}`, required ? withThis : head === null ? `(${withThis})?` : `(${withThis} | ${head})`);
    }
    return this.rule(hint, `"{" ws ${head} "}"`);
  }

  private visitArray(schema: Schema, path: string, hint: string): string | null {
    const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : [];
    const rest = Array.isArray(schema.prefixItems) ? schema.items : Array.isArray(schema.items) ? schema.additionalItems : schema.items;
    const minItems = typeof schema.minItems === "number" ? schema.minItems : 0;
    const maxItems = typeof schema.maxItems === "number" ? schema.maxItems : undefined;
    if (maxItems !== undefined && minItems > maxItems) return null; // no array fits
    this.primitive("ws");
    if (schema.uniqueItems === true) {
      const unique = prefix.length === 0 ? this.distinctList(rest, minItems, maxItems, path, hint) : undefined;
      if (unique !== undefined) return unique;
      this.note("uniqueItems", path);
    }

    const items: string[] = [];
    let cut = false;
    for (let i = 0; i < prefix.length && (maxItems === undefined || i < maxItems); i++) {
      const expr = this.visit(prefix[i], `${path}/prefixItems/${i}`, `${hint}-${i}`);
      if (expr === null) {
        // No value fits item i: the array stops before it, so no later item (tuple or rest) appears.
        if (i < minItems) return null;
        cut = true;
        break;
      }
      items.push(expr);
    }
    const prefixLength = items.length;
    const restExpr = rest === false || cut ? null : this.visit(rest ?? true, `${path}/items`, `${hint}-item`);
    const restMin = Math.max(0, minItems - prefixLength);
    let restMax = maxItems === undefined ? undefined : Math.max(0, maxItems - prefixLength);
    if (restExpr === null) {
      if (restMin > 0) return null;
      restMax = 0;
    }
    if (restMin > MAX_REPEAT || (restMax !== undefined && restMax > MAX_REPEAT)) {
      this.note("minItems/maxItems", path);
      restMax = undefined;
    }
    const lo = Math.min(restMin, MAX_REPEAT);

    // All tuple items are written (a sound subset: shorter arrays are valid too), then the rest.
    const parts: string[] = [];
    items.forEach((expr, i) => parts.push(i === 0 ? expr : `"," ws ${expr}`));
    let body = parts.join(" ");
    if (restExpr !== null && restMax !== 0) {
      if (prefixLength > 0) {
        const more = repeat(`("," ws ${restExpr})`, lo, restMax);
        body = more ? `${body} ${more}` : body;
      } else {
        const more = repeat(`("," ws ${restExpr})`, Math.max(0, lo - 1), restMax === undefined ? undefined : restMax - 1);
        const list = `${restExpr}${more ? ` ${more}` : ""}`;
        body = lo > 0 ? list : `(${list})?`;
      }
    }
    return this.rule(hint, `"[" ws ${body ? `${body} ` : ""}"]"`);
  }
}


/** Compiles a JSON Schema into a GBNF grammar. Throws UnsatisfiableSchemaError when no value fits. */
export function compileGrammar(schema: Schema | boolean): CompiledGrammar {
  const compiler = new Compiler(schema);
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
  const compiler = new Compiler(true);
  return { gbnf: compiler.compile(), exact: false, unexpressed: [reason], fallback: reason };
}
