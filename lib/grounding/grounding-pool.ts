import "server-only";
import path from "node:path";
import { GenserveError } from "../errors";
import { WorkerPool, type JobOptions, type PoolStatus } from "../workers/pool";
import type { GroundedLeaf, GroundingBudget, SourceDocument } from "./grounding-types";
import { collectLeaves } from "./leaves";

/** The worker file, relative to the package root (plain JavaScript loaded by Node as is). */
export const GROUNDING_WORKER_FILE = path.join("lib", "grounding", "grounding-worker.mjs");

export interface GroundingPoolOptions {
  size: number;
  budget: GroundingBudget;
  memoryMb: number;
}

/** Past its budget the aligner stops itself; the pool's hard limit is this much later. */
const GRACE_MS = 2_000;

/**
 * Aligns generated objects with their sources in worker threads (see align.ts), each job within
 * its budget. A job the worker could not finish in time (or that ran it out of memory) is every
 * leaf `none`, reason `budget`: grounding never fails a run that has its object, and never stalls.
 */
export class GroundingPool {
  private readonly pool: WorkerPool<null>;

  constructor(
    file: string,
    private readonly options: GroundingPoolOptions,
  ) {
    this.pool = new WorkerPool(file, {
      size: options.size,
      resourceLimits: { maxOldGenerationSizeMb: options.memoryMb, maxYoungGenerationSizeMb: Math.min(64, options.memoryMb) },
    }, () => null);
  }

  async align(object: unknown, docs: readonly SourceDocument[], job: JobOptions = {}): Promise<GroundedLeaf[]> {
    const { budget } = this.options;
    const unreached = (): GroundedLeaf[] => collectLeaves(object).map((l) => ({ pointer: l.pointer, match: "none", reason: "budget" }));
    let reply: Record<string, unknown>;
    try {
      reply = await this.pool.run({
        ...job,
        timeoutMs: budget.timeMs + GRACE_MS,
        timedOut: () => new GroundingUnfinished(),
        crashed: () => new GroundingUnfinished(),
        message: () => ({ object, docs, budget }),
      });
    } catch (error) {
      if (error instanceof GroundingUnfinished) return unreached();
      throw error;
    }
    if (typeof reply.failed === "string") throw new GenserveError("internal", { detail: `grounding failed: ${reply.failed}` });
    return reply.leaves as GroundedLeaf[];
  }

  status(): PoolStatus {
    return this.pool.status();
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

class GroundingUnfinished extends Error {}
