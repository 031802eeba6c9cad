import "server-only";
import path from "node:path";
import { WorkerPool, type JobOptions, type PoolStatus } from "../workers/pool";
import { anyValueGrammar, type CompiledGrammar, UnsatisfiableSchemaError } from "./compile";
import type { Schema } from "./keywords";

/** The worker file, relative to the package root (plain JavaScript that loads the TypeScript compiler). */
export const GRAMMAR_WORKER_FILE = path.join("lib", "grammar", "grammar-worker.mjs");

/** Compiles schemas to grammars; throws UnsatisfiableSchemaError when no value fits the schema. */
export interface GrammarCompiler {
  compile(schema: Schema | boolean, options?: JobOptions): Promise<CompiledGrammar>;
  status(): PoolStatus;
  close(): Promise<void>;
}

export interface GrammarPoolOptions {
  /** Worker threads compiling at once. */
  size: number;
  /** The time budget of one compile; past it the schema is constrained as any JSON and validated after. */
  timeoutMs: number;
  /** Told of every compile that fell back, with why (the run records its own warning). */
  onFallback?: (reason: string) => void;
}

/** A compile that did not finish: past its budget, or its worker died (out of memory). */
class Unfinished extends Error {}

/**
 * JSON Schema → GBNF off the event loop, within a time budget. A schema whose grammar cannot be
 * built in time, or that the compiler fails on, is not refused: its runs sample under the grammar of
 * any JSON value and validation and retry decide (`exact: false`, with the reason in `unexpressed`).
 */
export class GrammarWorkerPool implements GrammarCompiler {
  private readonly pool: WorkerPool<null>;

  constructor(
    file: string,
    private readonly options: GrammarPoolOptions,
  ) {
    // A deep chain of references recurses in the compiler: a larger stack than a worker's default.
    this.pool = new WorkerPool(file, { size: options.size, resourceLimits: { stackSizeMb: 16 } }, () => null);
  }

  async compile(schema: Schema | boolean, options: JobOptions = {}): Promise<CompiledGrammar> {
    let reply: Record<string, unknown>;
    try {
      reply = await this.pool.run({
        ...options,
        timeoutMs: this.options.timeoutMs,
        timedOut: () => new Unfinished(`grammar compile time (over ${this.options.timeoutMs} ms, limits.grammarCompileTimeoutMs)`),
        crashed: (outOfMemory) => new Unfinished(outOfMemory ? "grammar compiler out of memory" : "grammar compiler stopped"),
        message: () => ({ schema }),
      });
    } catch (error) {
      if (!(error instanceof Unfinished)) throw error;
      return this.fallback(error.message);
    }
    if (typeof reply.unsatisfiable === "string") throw new UnsatisfiableSchemaError(reply.unsatisfiable);
    if (typeof reply.compilerError === "string") return this.fallback(`grammar compiler error (${reply.compilerError.slice(0, 200)})`);
    return reply.compiled as CompiledGrammar;
  }

  status(): PoolStatus {
    return this.pool.status();
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private fallback(reason: string): CompiledGrammar {
    this.options.onFallback?.(reason);
    return anyValueGrammar(reason);
  }
}
