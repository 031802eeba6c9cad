import "server-only";
import path from "node:path";
import { LRUCache } from "lru-cache";
import { GenserveError } from "../errors";
import { WorkerPool, type JobOptions, type PoolStatus } from "../workers/pool";
import type { SchemaLimits } from "./guard";
import type { Inspection, InspectOptions } from "./inspect";

export type { JobOptions } from "../workers/pool";

/** ajv's error objects as the worker sends them. */
export interface RawAjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

export type CompileReply = { ok: true } | { ok: false; meta?: RawAjvError[]; compile?: string };
export type ValidateReply = { valid: true } | { valid: false; errors: RawAjvError[] };

/** The worker file, relative to the package root (it is plain JavaScript loaded by Node as is). */
export const SCHEMA_WORKER_FILE = path.join("lib", "schema", "validate-worker.mjs");

export interface SchemaPoolOptions {
  size: number;
  /** Compiled validators each worker keeps. */
  capacity: number;
  /** A validation running longer than this is stopped: its worker is terminated and replaced. */
  validateTimeoutMs: number;
  /** The same for compiling a schema. */
  compileTimeoutMs: number;
}

/** What the pool knows of one worker: the schema keys it has compiled (its own LRU evicts alike). */
type Known = LRUCache<string, true>;

/**
 * Worker threads that compile and run JSON Schema validators (see validate-worker.mjs): compiling a
 * large caller schema, or validating against a pattern that backtracks, never blocks the event loop
 * or the other callers, and every job is bounded in time (`schema_timeout` past it).
 */
export class SchemaWorkerPool {
  private readonly pool: WorkerPool<Known>;

  constructor(
    file: string,
    private readonly options: SchemaPoolOptions,
  ) {
    this.pool = new WorkerPool(file, { size: options.size, configure: { op: "configure", capacity: options.capacity } }, () => new LRUCache({ max: options.capacity }));
  }

  /** Screens a large schema (its JSON text, or the object) in a worker: see inspect.ts. */
  async inspect(schema: string | unknown, limits: SchemaLimits, options: InspectOptions, job: JobOptions = {}): Promise<Inspection> {
    const reply = await this.pool.run({
      ...job,
      timeoutMs: this.options.compileTimeoutMs,
      timedOut: () => timeout("Screening the schema", `${this.options.compileTimeoutMs} ms (limits.schemaCompileTimeoutMs)`),
      message: () => ({ op: "inspect", ...(typeof schema === "string" ? { text: schema } : { schema }), limits, ...options }),
    });
    return reply.inspection as Inspection;
  }

  async compile(key: string, draft: string, schema: Record<string, unknown>, options: JobOptions = {}): Promise<CompileReply> {
    return (await this.pool.run({
      ...options,
      timeoutMs: this.options.compileTimeoutMs,
      timedOut: () => timeout("Compiling the schema", `${this.options.compileTimeoutMs} ms (limits.schemaCompileTimeoutMs)`),
      message: () => ({ op: "compile", key, draft, schema }),
      replied: (known, reply) => void (reply.ok === true && known.set(key, true)),
    })) as CompileReply;
  }

  /** Validates against a compiled schema; a worker that has not compiled it (or evicted it) does so first. */
  async validate(key: string, draft: string, schema: Record<string, unknown>, value: unknown, options: JobOptions = {}): Promise<ValidateReply> {
    for (let attempt = 0; ; attempt++) {
      const reply = await this.pool.run({
        ...options,
        timeoutMs: this.options.validateTimeoutMs,
        timedOut: () => timeout("Validating the output against the schema", `${this.options.validateTimeoutMs} ms (limits.validationTimeoutMs)`),
        // The schema travels only to a worker that may not have it (validations are frequent while
        // streaming); a worker that evicted it meanwhile says so and gets it on the second try.
        message: (known) => ({ op: "validate", key, value, ...(attempt > 0 || !known.has(key) ? { draft, schema } : {}) }),
        replied: (known, reply) => void (!("missing" in reply || "compileFailed" in reply) && known.set(key, true)),
      });
      if ("missing" in reply && attempt === 0) continue;
      if ("missing" in reply || "compileFailed" in reply) throw new GenserveError("internal", { detail: "A schema that compiled before could not be compiled again." });
      return reply as ValidateReply;
    }
  }

  status(): PoolStatus {
    return this.pool.status();
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

function timeout(what: string, limit: string): GenserveError {
  return new GenserveError("schema_timeout", {
    detail: `${what} took longer than ${limit} and was stopped. Patterns run in linear time except those only JavaScript's engine can run (a back-reference, a lookahead or lookbehind, a count above 1,000): one of those may backtrack on this value; rewrite it without that construct.`,
  });
}
