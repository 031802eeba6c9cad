import "server-only";
import type { FieldError } from "../errors";
import { unescapePointerSegment } from "../json/pointer";
import type { JobOptions } from "../schema/schema-worker";
import type { PreparedSchema, SchemaCompiler } from "../schema/validator";

/** Keywords under which a value's validity depends on more than its own subschema. */
const CONDITIONAL = ["anyOf", "oneOf", "allOf", "not", "if", "then", "else", "dependentSchemas", "dependentRequired", "dependencies", "unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef", "patternProperties", "propertyNames", "contains"];
/** Keywords that constrain nothing. */
const ANNOTATIONS = new Set(["title", "description", "examples", "default", "$comment", "deprecated", "readOnly", "writeOnly", "$id", "$anchor", "$schema", "format"]);

type Schema = Record<string, unknown>;
type Lookup = { kind: "schema"; schema: Schema } | { kind: "unknown" } | { kind: "forbidden"; message: string };

/**
 * Validates parts of a streamed object as soon as they close. Only parts whose subschema applies
 * unconditionally are checked (reached through properties / items / prefixItems / local $ref /
 * additionalProperties, with no anyOf, allOf, if, ... on the way): a closed part that fails such a
 * subschema means the whole document can never validate, so the attempt can stop early.
 */
export class PartialValidator {
  private readonly lookups = new Map<string, Lookup>();
  private readonly prepared = new Map<string, Promise<PreparedSchema | null>>();
  /** Per subschema: its children's lookups (every item of an array shares one), and how a value is checked against it. */
  private readonly children = new WeakMap<Schema, Map<string, Lookup>>();
  private readonly plans = new WeakMap<Schema, { kind: "none" } | { kind: "type" } | { kind: "full"; prepared: Promise<PreparedSchema | null> }>();

  constructor(
    private readonly root: Schema,
    private readonly compiler: SchemaCompiler,
    /** Whose run this is, and when to give up: handed to every validation. */
    private readonly job: JobOptions = {},
  ) {}

  /**
   * The part's verdict against its own subschema: the problems that doom the document ([] when it
   * holds), or null when it cannot be judged alone (the root, validated in full at the end; a
   * subschema under anyOf, if, …; one that did not compile on its own).
   */
  async verdict(path: string, value: unknown): Promise<FieldError[] | null> {
    if (path === "") return null;
    const lookup = this.lookup(path);
    if (lookup.kind === "forbidden") return [{ path, message: lookup.message }];
    if (lookup.kind === "unknown") return null;
    const schema = lookup.schema;
    let plan = this.plans.get(schema);
    if (!plan) {
      const keys = Object.keys(schema).filter((k) => !ANNOTATIONS.has(k));
      plan = keys.length === 0 ? { kind: "none" } : keys.length === 1 && keys[0] === "type" ? { kind: "type" } : { kind: "full", prepared: this.prepare(schema) };
      this.plans.set(schema, plan);
    }
    if (plan.kind === "none") return [];
    if (plan.kind === "type") return typeMatches(schema.type, value) ? [] : [{ path, message: `must be ${[schema.type].flat().join(" or ")}` }];
    const prepared = await plan.prepared;
    if (!prepared) return null;
    const result = await prepared.validate(value, this.job);
    return result.valid ? [] : result.errors.map((e) => ({ path: e.path === "/" ? path : `${path}${e.path}`, message: e.message }));
  }

  private prepare(schema: Schema): Promise<PreparedSchema | null> {
    const standalone: Schema = { ...schema };
    for (const key of ["$schema", "$defs", "definitions"]) if (this.root[key] !== undefined && standalone[key] === undefined) standalone[key] = this.root[key];
    const cacheKey = JSON.stringify(standalone);
    let pending = this.prepared.get(cacheKey);
    if (!pending) {
      pending = this.compiler.prepare(standalone, ["schema"], { topLevelRule: false }).catch(() => null);
      this.prepared.set(cacheKey, pending);
    }
    return pending;
  }

  private lookup(path: string): Lookup {
    // Array indexes matter only for prefixItems; memoise by the path itself (bounded by the document).
    let found = this.lookups.get(path);
    if (found) return found;
    const cut = path.lastIndexOf("/");
    const parent = cut <= 0 ? ({ kind: "schema", schema: this.root } as Lookup) : this.lookup(path.slice(0, cut));
    found = parent.kind === "schema" ? this.cachedChild(parent.schema, path.slice(cut + 1)) : { kind: "unknown" };
    // Containers' lookups are kept by path (their children ask again); a leaf's is not asked for twice.
    this.lookups.set(path, found);
    return found;
  }

  /** A child's lookup, computed once per subschema and segment; array indices past a tuple's prefix share one. */
  private cachedChild(node: Schema, escaped: string): Lookup {
    let byKey = this.children.get(node);
    if (!byKey) this.children.set(node, (byKey = new Map()));
    const properties = node.properties as Record<string, unknown> | undefined;
    const index = /^\d+$/.test(escaped) && !Array.isArray(node.prefixItems) && !Array.isArray(node.items) && !node.$ref && !(properties && Object.hasOwn(properties, escaped));
    const key = index ? "#item" : escaped;
    let found = byKey.get(key);
    if (!found) {
      found = this.child(node, unescapePointerSegment(escaped));
      byKey.set(key, found);
    }
    return found;
  }

  private child(node: Schema, segment: string): Lookup {
    const schema = this.resolve(node);
    if (!schema || CONDITIONAL.some((k) => k in schema)) return { kind: "unknown" };
    const asSchema = (s: unknown): Lookup => {
      const resolved = this.resolve(s as Schema);
      return resolved && !CONDITIONAL.some((k) => k in resolved) ? { kind: "schema", schema: resolved } : { kind: "unknown" };
    };
    const properties = schema.properties as Record<string, unknown> | undefined;
    if (properties && Object.hasOwn(properties, segment)) return asSchema(properties[segment]);
    if (/^\d+$/.test(segment)) {
      const prefix = schema.prefixItems as unknown[] | undefined;
      const index = Number(segment);
      if (Array.isArray(prefix) && index < prefix.length) return asSchema(prefix[index]);
      if (Array.isArray(schema.items)) return index < schema.items.length ? asSchema(schema.items[index]) : { kind: "unknown" };
      if (schema.items && typeof schema.items === "object") return asSchema(schema.items);
      if (schema.items === false) return { kind: "forbidden", message: "must not have more items" };
      return { kind: "unknown" };
    }
    if (schema.additionalProperties === false && schema.type === "object") return { kind: "forbidden", message: `must not have additional property "${segment}"` };
    if (schema.additionalProperties && typeof schema.additionalProperties === "object") return asSchema(schema.additionalProperties);
    return { kind: "unknown" };
  }

  /** Follows local $refs (which may sit beside other keywords in 2019-09+; then: unknown). */
  private resolve(node: Schema | undefined): Schema | null {
    let current = node;
    for (let hops = 0; current && typeof current.$ref === "string"; hops++) {
      if (hops > 16 || Object.keys(current).some((k) => k !== "$ref" && !ANNOTATIONS.has(k))) return null;
      const ref = current.$ref as string;
      if (!ref.startsWith("#")) return null;
      current = ref
        .slice(1)
        .split("/")
        .slice(1)
        .reduce<Schema | undefined>((n, k) => n?.[unescapePointerSegment(k)] as Schema | undefined, this.root);
    }
    return current && typeof current === "object" ? current : null;
  }
}

function typeMatches(type: unknown, value: unknown): boolean {
  const types = [type].flat() as string[];
  return types.some((t) => {
    switch (t) {
      case "string":
        return typeof value === "string";
      case "number":
        return typeof value === "number";
      case "integer":
        return Number.isInteger(value);
      case "boolean":
        return typeof value === "boolean";
      case "null":
        return value === null;
      case "array":
        return Array.isArray(value);
      case "object":
        return value !== null && typeof value === "object" && !Array.isArray(value);
      default:
        return true;
    }
  });
}
