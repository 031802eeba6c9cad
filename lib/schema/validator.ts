import "server-only";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { LRUCache } from "lru-cache";
import { dedupeFieldErrors, validationError, isGenserveError, type FieldError } from "../errors";
import type { Limits } from "../config/schema";
import type { SchemaLimits } from "./guard";
import { type Draft, type Inspection, inspectSchema } from "./inspect";
import { backtrackingVerdict } from "./redos";
import { parsePointer, resolveLocalRef, toPointer } from "../json/pointer";
import { SchemaWorkerPool, type JobOptions, type RawAjvError, type ValidateReply } from "./schema-worker";
import type { PoolStatus } from "../workers/pool";

/** Longest a ReDoS analysis of one JavaScript-only pattern may take. */
const REDOS_ANALYSIS_MS = 2_000;
/** Schemas larger than this (as JSON) are inspected in a worker: screening them takes milliseconds per 100 KB. */
const INSPECT_ON_LOOP_CHARS = 64 * 1024;

/**
 * Validation on the event loop, without the worker round trip (about half a millisecond of a
 * generate/object run here, docs/benchmarks.md), for schemas whose validation cost is bounded by
 * their size times the value's: at most LOCAL_MAX_CHARS of JSON and LOCAL_MAX_NODES subschemas with
 * every reference written out (references that recurse, or fan out into more, are not), no
 * `uniqueItems` (quadratic in the items), no `$data`, and only patterns that run on RE2 (linear time).
 */
const LOCAL_MAX_CHARS = 8 * 1024;
const LOCAL_MAX_NODES = 1_000;
/** A schema is compiled on the event loop once it has been used this often (a hot schema). */
const LOCAL_AFTER_USES = 3;
/**
 * Validations on the event loop that take longer than this, `LOCAL_SLOW_IN_A_ROW` times in a row,
 * send the schema back to the workers for good (one slow reading alone may be the process being
 * descheduled on a busy machine, not the schema).
 */
const LOCAL_BUDGET_MS = 5;
const LOCAL_SLOW_IN_A_ROW = 2;

interface Validators {
  compile(message: { key: string; draft: string; schema: Record<string, unknown> }): { ok: boolean };
  validate(message: { key: string; value: unknown }): ValidateReply | { missing: true } | { compileFailed: true };
}

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
  /** Prepared schemas by their JSON text (small ones): requests that send the same schema skip screening. */
  private readonly byText: LRUCache<string, PreparedSchema>;
  private readonly pool: SchemaWorkerPool;
  /** The same ajv set-up as the workers', on the event loop (ajv-engine.mjs, loaded on first use). */
  private local?: Promise<Validators>;
  private readonly engineFile: string;

  constructor(
    private readonly limits: SchemaLimits & Pick<Limits, "validatorCache" | "schemaWorkers" | "validationTimeoutMs" | "schemaCompileTimeoutMs">,
    options: { workerFile: string },
  ) {
    this.cache = new LRUCache({ max: limits.validatorCache });
    this.byText = new LRUCache({ max: limits.validatorCache, maxSize: 16 * 1024 * 1024, sizeCalculation: (_, key) => key.length });
    this.engineFile = path.join(path.dirname(options.workerFile), "ajv-engine.mjs");
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
    let text: string | undefined;
    try {
      text = JSON.stringify(schema);
    } catch {
      // Nested past what JSON.stringify can walk: the worker's screening says how deep is too deep.
    }
    // The same schema text again (each request parses its own copy): screening and hashing skipped.
    const textKey = text !== undefined && text.length <= INSPECT_ON_LOOP_CHARS ? `${topLevelRule ? 1 : 0}${base.join("/")}\n${text}` : undefined;
    const seen = textKey === undefined ? undefined : this.byText.get(textKey);
    if (seen) {
      if (topLevelRule && typeof schema === "object" && schema !== null) this.byObject.set(schema, seen);
      return seen;
    }
    const at = (segments: readonly (string | number)[]) => toPointer([...base, ...segments]);
    // The top-level rule is genserve's for requests; subschemas of a request are prepared without it.
    const { errors, jsOnly, draft, hash, warnings } = await this.inspect(schema, text, { base, topLevelRule });
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
        const onLoop = jsOnly.length === 0 && text !== undefined && text.length <= LOCAL_MAX_CHARS && localEligible(record);
        pending = this.compile(key, draft!, hash, record, at, onLoop).finally(() => this.compiling.delete(key));
        this.compiling.set(key, pending);
      }
      prepared = await pending;
    }
    if (warnings.length > 0) prepared = { ...prepared, warnings };
    if (topLevelRule) this.byObject.set(record, prepared);
    if (textKey !== undefined) this.byText.set(textKey, prepared);
    return prepared;
  }

  /**
   * Screening, draft, warnings and hash: on the event loop for a small schema, in a schema worker for
   * a large one (sent as its JSON text, which is cheaper to pass than the object).
   */
  private async inspect(schema: unknown, text: string | undefined, options: { base: readonly string[]; topLevelRule: boolean }): Promise<Inspection> {
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
    onLoop: boolean,
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
    const validators = () => (this.local ??= import(/* webpackIgnore: true */ /* turbopackIgnore: true */ pathToFileURL(this.engineFile).href).then((m: { createValidators(capacity: number): Validators }) => m.createValidators(this.limits.validatorCache)));
    // Small schemas without references validate on the event loop once they are hot (see LOCAL_MAX_CHARS).
    let uses = 0;
    let slow = 0;
    let local: Validators | null | undefined = onLoop ? undefined : null;
    const onEventLoop = async (value: unknown): Promise<ValidateReply | undefined> => {
      if (local === null || ++uses < LOCAL_AFTER_USES) return undefined;
      if (local === undefined) {
        const engine = await validators();
        local = engine.compile({ key, draft, schema }).ok ? engine : null;
        if (local === null) return undefined;
      }
      const started = performance.now();
      const reply = local.validate({ key, value });
      slow = performance.now() - started > LOCAL_BUDGET_MS ? slow + 1 : 0;
      if (slow >= LOCAL_SLOW_IN_A_ROW) local = null;
      if ("missing" in reply || "compileFailed" in reply) {
        local = undefined; // evicted from the event loop's set: compiled again on the next use
        return undefined;
      }
      return reply;
    };
    const prepared: PreparedSchema = {
      hash,
      draft,
      schema,
      warnings: [],
      async validate(value, options) {
        const result = (await onEventLoop(value)) ?? (await pool.validate(key, draft, schema, value, options));
        if (result.valid) return { valid: true };
        return { valid: false, errors: dedupeFieldErrors(result.errors.map((e) => ({ path: e.instancePath || "/", message: describe(e) }))) };
      },
    };
    this.cache.set(key, prepared);
    return prepared;
  }
}

/** Whether a schema of at most LOCAL_MAX_CHARS may be validated on the event loop (see LOCAL_MAX_CHARS). */
function localEligible(schema: Record<string, unknown>): boolean {
  // Subschemas counted with references written out (each node's count kept, so a reference used
  // twice counts twice); a cycle, or a reference this cannot follow, makes it ineligible.
  const sizes = new Map<object, number>();
  const visiting = new Set<object>();
  const count = (node: unknown, depth: number): number => {
    if (typeof node !== "object" || node === null) return 1;
    const known = sizes.get(node);
    if (known !== undefined) return known;
    if (visiting.has(node) || depth > 64) return Infinity;
    visiting.add(node);
    let size = 1;
    for (const [key, value] of Array.isArray(node) ? node.entries() : Object.entries(node)) {
      if (key === "$ref") {
        const target = typeof value === "string" && (value === "#" || value.startsWith("#/")) ? resolveLocalRef(schema, value) : undefined;
        size += target === undefined ? Infinity : count(target.value, depth + 1);
      } else if (["$dynamicRef", "$recursiveRef", "$data"].includes(String(key)) || (key === "uniqueItems" && value === true)) size = Infinity;
      else if ((key === "$id" || key === "id") && typeof value === "string" && node !== schema) size = Infinity; // references inside resolve against it
      else size += count(value, depth + 1);
      if (size > LOCAL_MAX_NODES) break;
    }
    visiting.delete(node);
    sizes.set(node, size);
    return size;
  };
  return count(schema, 0) <= LOCAL_MAX_NODES;
}

function describe(error: RawAjvError): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "additionalProperties") return `must not have additional property "${String(params.additionalProperty)}"`;
  if (error.keyword === "required") return `must have required property "${String(params.missingProperty)}"`;
  if (error.keyword === "enum") return `must be one of ${JSON.stringify(params.allowedValues).slice(0, 300)}`;
  if (error.keyword === "const") return `must be ${JSON.stringify(params.allowedValue).slice(0, 300)}`;
  return error.message ?? error.keyword;
}
