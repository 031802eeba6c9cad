import Ajv, { type ErrorObject, type ValidateFunction } from "ajv";
import Ajv2019 from "ajv/dist/2019";
import Ajv2020 from "ajv/dist/2020";
import draft06 from "ajv/dist/refs/json-schema-draft-06.json";
import AjvDraft04 from "ajv-draft-04";
import addFormats from "ajv-formats";
import { LRUCache } from "lru-cache";
import { isGenserveError, validationError, type FieldError } from "../errors";
import { schemaHash } from "./canonical";
import { screenSchema, type SchemaLimits } from "./guard";
import { toPointer } from "./pointer";

export type Draft = "draft-04" | "draft-06" | "draft-07" | "2019-09" | "2020-12";

export interface PreparedSchema {
  hash: string;
  draft: Draft;
  schema: Record<string, unknown>;
  /** Validates a generated value; errors are JSON Pointers into the value. */
  validate(value: unknown): { valid: true } | { valid: false; errors: FieldError[] };
}

type AnyAjv = Ajv | Ajv2019 | Ajv2020 | AjvDraft04;

function makeAjv(draft: Draft): AnyAjv {
  const options = {
    // Callers' schemas carry annotations of every kind ("example", "x-..."): strict mode would refuse them.
    strict: false,
    allErrors: true,
    validateFormats: true,
    logger: false as const,
    // Never fetch anything: remote references are refused before compiling.
    loadSchema: undefined,
  };
  let ajv: AnyAjv;
  switch (draft) {
    case "draft-04":
      ajv = new AjvDraft04(options);
      break;
    case "2019-09":
      ajv = new Ajv2019(options);
      break;
    case "2020-12":
      ajv = new Ajv2020(options);
      break;
    case "draft-06":
      ajv = new Ajv(options);
      ajv.addMetaSchema(draft06);
      break;
    default:
      ajv = new Ajv(options);
  }
  addFormats(ajv as Ajv);
  return ajv;
}

/** Which draft a schema is written in: its `$schema`, else 2020-12 unless it uses draft-07-only forms. */
export function detectDraft(schema: Record<string, unknown>): Draft | null {
  const declared = schema.$schema;
  if (typeof declared === "string") {
    if (declared.includes("draft-04")) return "draft-04";
    if (declared.includes("draft-06")) return "draft-06";
    if (declared.includes("draft-07")) return "draft-07";
    if (declared.includes("2019-09")) return "2019-09";
    if (declared.includes("2020-12")) return "2020-12";
    return null;
  }
  return usesDraft7Forms(schema, 0) ? "draft-07" : "2020-12";
}

function usesDraft7Forms(node: unknown, depth: number): boolean {
  if (node === null || typeof node !== "object" || depth > 64) return false;
  if (Array.isArray(node)) return node.some((n) => usesDraft7Forms(n, depth + 1));
  const record = node as Record<string, unknown>;
  if (Array.isArray(record.items) || "additionalItems" in record) return true;
  return Object.values(record).some((v) => usesDraft7Forms(v, depth + 1));
}

/**
 * Compiles callers' schemas once per (draft, canonical hash) and keeps them in a bounded LRU.
 * Ajv caches compiled schemas by object identity, so compiling each request's freshly parsed schema
 * would grow its cache forever; every compiled schema is removed from Ajv right after compiling and
 * lives only in this cache.
 */
export class SchemaCompiler {
  private readonly ajv = new Map<Draft, AnyAjv>();
  private readonly cache: LRUCache<string, PreparedSchema>;

  constructor(private readonly limits: SchemaLimits & { validatorCache: number }) {
    this.cache = new LRUCache({ max: limits.validatorCache });
  }

  private instance(draft: Draft): AnyAjv {
    let ajv = this.ajv.get(draft);
    if (!ajv) this.ajv.set(draft, (ajv = makeAjv(draft)));
    return ajv;
  }

  /** Screens, checks against the meta-schema and compiles; throws 400 naming every problem. */
  prepare(schema: unknown, base: readonly string[] = ["schema"]): PreparedSchema {
    const at = (segments: readonly (string | number)[]) => toPointer([...base, ...segments]);
    const screened = screenSchema(schema, this.limits, base);
    if (screened.length > 0) throw validationError(screened);
    const record = schema as Record<string, unknown>;
    const draft = detectDraft(record);
    if (draft === null) {
      throw validationError([{ path: at(["$schema"]), message: "unknown $schema; use draft-04, -06, -07, 2019-09 or 2020-12" }]);
    }
    const hash = schemaHash(record);
    const key = `${draft}:${hash}`;
    const cached = this.cache.get(key);
    if (cached) return cached;

    const ajv = this.instance(draft);
    if (!ajv.validateSchema(record)) {
      const errors = (ajv.errors ?? []).map((e) => ({ path: at(splitPointer(e.instancePath)), message: describe(e) }));
      throw validationError(dedupe(errors), `schema is not a valid JSON Schema (${draft}): ${errors[0]?.path} ${errors[0]?.message}`);
    }
    let compiled: ValidateFunction;
    try {
      compiled = ajv.compile(record);
    } catch (error) {
      throw validationError([{ path: at([]), message: `cannot be compiled: ${(error as Error).message}` }]);
    } finally {
      ajv.removeSchema(record);
    }
    const prepared: PreparedSchema = {
      hash,
      draft,
      schema: record,
      validate(value) {
        if (compiled(value)) return { valid: true };
        return { valid: false, errors: dedupe((compiled.errors ?? []).map((e) => ({ path: e.instancePath || "/", message: describe(e) }))) };
      },
    };
    this.cache.set(key, prepared);
    return prepared;
  }

  /** The problems `prepare` would throw for, as a list (empty when the schema is usable). */
  problems(schema: unknown, base: readonly string[] = ["schema"]): FieldError[] {
    try {
      this.prepare(schema, base);
      return [];
    } catch (error) {
      return isGenserveError(error) && error.errors ? error.errors : [{ path: toPointer(base), message: (error as Error).message }];
    }
  }

  get size(): number {
    return this.cache.size;
  }
}

function splitPointer(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer.slice(1).split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function describe(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "additionalProperties") return `must not have additional property "${String(params.additionalProperty)}"`;
  if (error.keyword === "required") return `must have required property "${String(params.missingProperty)}"`;
  if (error.keyword === "enum") return `must be one of ${JSON.stringify(params.allowedValues).slice(0, 300)}`;
  if (error.keyword === "const") return `must be ${JSON.stringify(params.allowedValue).slice(0, 300)}`;
  return error.message ?? error.keyword;
}

function dedupe(errors: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const key = `${e.path}\u0000${e.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

