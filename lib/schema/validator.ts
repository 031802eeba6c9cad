import "server-only";
import { LRUCache } from "lru-cache";
import { dedupeFieldErrors, validationError, isGenserveError, type FieldError } from "../errors";
import type { Limits } from "../config/schema";
import type { SchemaLimits } from "./guard";
import { type Draft, type Inspection, inspectSchema } from "./inspect";
import { backtrackingVerdict } from "./redos";
import { parsePointer, toPointer } from "../json/pointer";
import { SchemaWorkerPool, type JobOptions, type RawAjvError } from "./schema-worker";
import type { PoolStatus } from "../workers/pool";

/** Longest a ReDoS analysis of one JavaScript-only pattern may take. */
const REDOS_ANALYSIS_MS = 2_000;
/** Schemas larger than this (as JSON) are inspected in a worker: screening them takes milliseconds per 100 KB. */
const INSPECT_ON_LOOP_CHARS = 64 * 1024;

export type { Draft } from "./inspect";

export type ValidationResult = { valid: true } | { valid: false; errors: FieldError[] };

export interface PreparedSchema {
  hash: string;
  draft: Draft;
  schema: Record<string, unknown>;
  /** What was tolerated in the schema (an older draft's keyword), recorded on the runs that use it. */
  warnings: string[];
  /**
   * Validates a generated value; errors are JSON Pointers into the value. Bounded in time: past
   * `limits.validationTimeoutMs` it throws `schema_timeout`. `owner` (the caller's key) gets a fair
   * turn at the workers; `signal` gives up waiting.
   */
  validate(value: unknown, options?: JobOptions): Promise<ValidationResult>;
}

/**
 * Screens callers' schemas on the event loop (cheap, bounded), then checks them against their
 * meta-schema and compiles them in a worker thread (expensive) once per (draft, canonical hash).
 * Prepared schemas live in a bounded LRU here and compiled validators in one of the same size in
 * the worker; each compiled schema is removed from ajv's own identity-keyed cache at once.
 */
export class SchemaCompiler {
  private readonly cache: LRUCache<string, PreparedSchema>;
  private readonly compiling = new Map<string, Promise<PreparedSchema>>();
  /** Request schemas already prepared, by object: a request's schema is prepared once, not per step. */
  private readonly byObject = new WeakMap<object, PreparedSchema>();
  private readonly pool: SchemaWorkerPool;

  constructor(
    private readonly limits: SchemaLimits & Pick<Limits, "validatorCache" | "schemaWorkers" | "validationTimeoutMs" | "schemaCompileTimeoutMs">,
    options: { workerFile: string },
  ) {
    this.cache = new LRUCache({ max: limits.validatorCache });
    this.pool = new SchemaWorkerPool(options.workerFile, {
      size: limits.schemaWorkers,
      capacity: limits.validatorCache,
      validateTimeoutMs: limits.validationTimeoutMs,
      compileTimeoutMs: limits.schemaCompileTimeoutMs,
    });
  }

  /** Screens, checks against the meta-schema and compiles; throws 400 naming every problem. */
  async prepare(schema: unknown, base: readonly string[] = ["schema"], options: { topLevelRule?: boolean } = {}): Promise<PreparedSchema> {
    const topLevelRule = options.topLevelRule ?? true;
    const remembered = topLevelRule && typeof schema === "object" && schema !== null ? this.byObject.get(schema) : undefined;
    if (remembered) return remembered;
    const at = (segments: readonly (string | number)[]) => toPointer([...base, ...segments]);
    // The top-level rule is genserve's for requests; subschemas of a request are prepared without it.
    const { errors, jsOnly, draft, hash, warnings } = await this.inspect(schema, { base, topLevelRule });
    if (errors.length > 0) throw validationError(errors);
    // Patterns RE2 cannot run are analysed before they may run on JavaScript's engine.
    if (jsOnly.length > 0) {
      const timeoutMs = Math.min(REDOS_ANALYSIS_MS, this.limits.schemaCompileTimeoutMs);
      const verdicts = await Promise.all(jsOnly.map((p) => backtrackingVerdict(p.pattern, timeoutMs)));
      const unsafe = jsOnly.flatMap((p, i) => {
        const verdict = verdicts[i]!;
        return verdict.safe ? [] : [{ path: p.path, message: `${p.reason}, and on that engine it ${verdict.detail}; rewrite it without that construct` }];
      });
      if (unsafe.length > 0) throw validationError(unsafe);
    }
    const record = schema as Record<string, unknown>;
    const key = `${draft}:${hash}`;
    let prepared: PreparedSchema | undefined = this.cache.get(key);
    if (!prepared) {
      let pending = this.compiling.get(key);
      if (!pending) {
        pending = this.compile(key, draft!, hash, record, at).finally(() => this.compiling.delete(key));
        this.compiling.set(key, pending);
      }
      prepared = await pending;
    }
    if (warnings.length > 0) prepared = { ...prepared, warnings };
    if (topLevelRule) this.byObject.set(record, prepared);
    return prepared;
  }

  /**
   * Screening, draft, warnings and hash: on the event loop for a small schema, in a schema worker for
   * a large one (sent as its JSON text, which is cheaper to pass than the object).
   */
  private async inspect(schema: unknown, options: { base: readonly string[]; topLevelRule: boolean }): Promise<Inspection> {
    let text: string | undefined;
    try {
      text = JSON.stringify(schema);
    } catch {
      // Nested past what JSON.stringify can walk: the worker's screening says how deep is too deep.
    }
    if (text !== undefined && text.length <= INSPECT_ON_LOOP_CHARS) return inspectSchema(schema, this.limits, { ...options, json: text });
    return this.pool.inspect(text ?? schema, this.limits, options);
  }

  /** The problems `prepare` would throw for, as a list (empty when the schema is usable). */
  async problems(schema: unknown, base: readonly string[] = ["schema"]): Promise<FieldError[]> {
    try {
      await this.prepare(schema, base);
      return [];
    } catch (error) {
      if (isGenserveError(error) && error.errors) return error.errors;
      throw error;
    }
  }

  get size(): number {
    return this.cache.size;
  }

  /** The worker pool's state, for readiness checks. */
  status(): PoolStatus {
    return this.pool.status();
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private async compile(
    key: string,
    draft: Draft,
    hash: string,
    schema: Record<string, unknown>,
    at: (segments: readonly (string | number)[]) => string,
  ): Promise<PreparedSchema> {
    const reply = await this.pool.compile(key, draft, schema).catch((error: unknown) => {
      if (isGenserveError(error) && error.code === "schema_timeout") {
        throw validationError([{ path: at([]), message: `could not be compiled within ${this.limits.schemaCompileTimeoutMs} ms (limits.schemaCompileTimeoutMs); simplify it` }]);
      }
      throw error;
    });
    if (!reply.ok) {
      if (reply.meta) {
        const errors = dedupeFieldErrors(reply.meta.map((e) => ({ path: at(parsePointer(e.instancePath)), message: describe(e) })));
        throw validationError(errors, `schema is not a valid JSON Schema (${draft}): ${errors[0]?.path} ${errors[0]?.message}`);
      }
      throw validationError([{ path: at([]), message: `cannot be compiled: ${reply.compile}` }]);
    }
    const pool = this.pool;
    const prepared: PreparedSchema = {
      hash,
      draft,
      schema,
      warnings: [],
      async validate(value, options) {
        const result = await pool.validate(key, draft, schema, value, options);
        if (result.valid) return { valid: true };
        return { valid: false, errors: dedupeFieldErrors(result.errors.map((e) => ({ path: e.instancePath || "/", message: describe(e) }))) };
      },
    };
    this.cache.set(key, prepared);
    return prepared;
  }
}

function describe(error: RawAjvError): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "additionalProperties") return `must not have additional property "${String(params.additionalProperty)}"`;
  if (error.keyword === "required") return `must have required property "${String(params.missingProperty)}"`;
  if (error.keyword === "enum") return `must be one of ${JSON.stringify(params.allowedValues).slice(0, 300)}`;
  if (error.keyword === "const") return `must be ${JSON.stringify(params.allowedValue).slice(0, 300)}`;
  return error.message ?? error.keyword;
}
