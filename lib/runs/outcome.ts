import "server-only";
import { summarizeGrounding } from "../domain/grounding";
import type { Logger } from "pino";
import type { Config } from "../config/config-types";
import { runEvent } from "../delivery/events";
import { queueEvent, type EventDispatch } from "../delivery/worker";
import type { CallbackSpec, DecodingMode, EndedRunStatus, RunMetadata, RunOperation } from "../domain/run-vocabulary";
import { GenserveError, isGenserveError, toProblem, type ProblemBody } from "../errors";
import { providerFailureDetails } from "../models/provider-errors";
import { messageText, type TokenUsage } from "../models/model-client";
import type { NewEvent, RunOutcome, RunRecord, Settlement, Store } from "../store/store-types";
import type { Attempted } from "./attempt";
import { computeCost } from "./cost";
import type { Metering } from "./metering";
import type { RunMetrics } from "../observability/metrics";
import type { TraceSpan } from "../observability/tracing";
import type { Execution } from "./run-request";
import { finishNote } from "./finish-reason";

/**
 * What recording a run's end needs: which run, whose, on which model, and its tallies. A run being
 * executed has one (`ledgerOf`), and so has a stored run that is not (`ledgerOfRecord`: a queued
 * run that no longer plans, a run a crash left behind).
 */
export interface RunLedger {
  id: string;
  operation: RunOperation;
  keyId: string;
  workflowSlug: string;
  modelAlias: string;
  /** The model's id when the provider reported none. */
  modelId: string;
  callback?: CallbackSpec;
  log: Logger;
  startedAt: number;
  usage: TokenUsage;
  attempts: number;
  decoding?: DecodingMode;
  warnings: string[];
  /** The run's span, ended with the outcome. */
  span?: TraceSpan;
}

export interface OutcomeDeps {
  config: Config;
  store: Store;
  logger: Logger;
  /**
   * Delivers a run's callback event as soon as it is stored: held by this process in the same
   * transaction and handed over, or (every slot busy) queued free and the delivery loop told.
   */
  delivery?: EventDispatch;
  /** This process: outcomes are written only for runs it still holds the lease of. */
  owner: string;
  metering: Metering;
  metrics?: RunMetrics;
  now: () => Date;
}

/** How long a run's end may wait for an unreachable database: well inside the run's lease. */
const recordGraceMs = (leaseMs: number) => Math.floor(leaseMs / 2);

/**
 * The outcome stage: a run's end is recorded once — status, output or problem, tokens, cost,
 * duration, attempts — and, in the same transaction, its callback event is queued (outbox); a
 * successful thread run appends its exchange to the thread.
 */
export class Outcomes {
  constructor(private readonly deps: OutcomeDeps) {}

  async succeed(run: Execution, result: Attempted): Promise<RunMetadata> {
    const { plan } = run;
    const finishedAt = this.deps.now();
    const ledger = ledgerOf(run);
    const metadata = { ...this.metadata(ledger, result.modelId, finishedAt.getTime() - run.startedAt), ...finishNote(result.finishReason) };
    if (result.grounding) metadata.grounding = summarizeGrounding(result.grounding);
    const recorded = await this.record(
      plan.id,
      {
        status: "succeeded",
        output: result.value,
        error: null,
        modelName: metadata.model.name,
        modelTag: metadata.model.tag,
        decoding: run.decoding ?? null,
        warnings: run.warnings,
        pace: run.pace?.points() ?? null,
        grounding: result.grounding ?? null,
        inputTokens: metadata.inputTokens,
        outputTokens: metadata.outputTokens,
        cost: metadata.cost,
        durationMs: metadata.durationInMs,
        attempts: run.attempts,
        finishedAt: finishedAt.toISOString(),
      },
      this.callbackEvent(ledger, { object: result.value, text: typeof result.value === "string" ? result.value : undefined }, metadata, finishedAt),
      this.deps.metering.settlement(run.usage, metadata.cost),
    );
    if (!recorded) {
      // Another process reconciled the run while this one could not reach the database.
      throw new GenserveError("interrupted", { detail: "The run's result could not be recorded in time; it was marked as interrupted." });
    }
    if (plan.thread) {
      const at = finishedAt.toISOString();
      await this.deps.store.threads.append(
        plan.principal.keyId,
        plan.thread.id,
        [
          { role: "user", content: messageText(plan.prompt.messages.at(-1)!.content), runId: plan.id, createdAt: at },
          { role: "assistant", content: typeof result.value === "string" ? result.value : JSON.stringify(result.value), runId: plan.id, createdAt: at },
        ],
        at,
      );
    }
    this.observe(ledger, "succeeded", metadata);
    ledger.span?.set(spanUsage(metadata, run.attempts));
    ledger.span?.end();
    run.log.info({ status: "succeeded", durationMs: metadata.durationInMs, inputTokens: metadata.inputTokens, outputTokens: metadata.outputTokens, attempts: run.attempts }, "run finished");
    return metadata;
  }

  private observe(run: RunLedger, status: EndedRunStatus, metadata: RunMetadata, errorCode?: string): void {
    this.deps.metrics?.runEnded({
      operation: run.operation,
      workflow: run.workflowSlug,
      model: run.modelAlias,
      key: run.keyId,
      status,
      seconds: metadata.durationInMs / 1000,
      inputTokens: metadata.inputTokens,
      outputTokens: metadata.outputTokens,
      costUsd: Number(metadata.cost),
      errorCode,
    });
  }

  /**
   * Records a failed run (and queues its run.failed event) — or, when the problem is `cancelled`, a
   * cancelled one (run.cancelled), its problem kept on it; returns the error as the caller sees it.
   */
  async fail(run: RunLedger, error: unknown, options: { settle?: Settlement; /** null: whoever holds the run (a queued run is held by none). */ owner?: null } = {}): Promise<GenserveError> {
    const known = isGenserveError(error) ? error : new GenserveError("internal", { detail: "An internal error occurred.", cause: error });
    known.runId = run.id;
    const problem: ProblemBody = toProblem(known, run.log);
    const status = problem.code === "cancelled" ? "cancelled" : "failed";
    const finishedAt = this.deps.now();
    const durationMs = Math.max(0, finishedAt.getTime() - run.startedAt);
    const metadata = this.metadata(run, undefined, durationMs);
    run.span?.set(spanUsage(metadata, run.attempts));
    run.span?.fail(problem.code, problem.detail);
    run.span?.end();
    try {
      const recorded = await this.record(
        run.id,
        {
          status,
          output: null,
          error: problem,
          modelName: metadata.model.name,
          modelTag: metadata.model.tag,
          decoding: run.decoding ?? null,
          warnings: run.warnings,
          inputTokens: run.usage.inputTokens,
          outputTokens: run.usage.outputTokens,
          cost: metadata.cost,
          durationMs,
          attempts: run.attempts,
          finishedAt: finishedAt.toISOString(),
        },
        this.callbackEvent(run, { error: problem }, metadata, finishedAt),
        options.settle ?? this.deps.metering.settlement(run.usage, metadata.cost),
        options.owner === null ? null : this.deps.owner,
      );
      if (!recorded) run.log.warn("the run had already ended elsewhere (reconciled); this failure was not recorded");
      else this.observe(run, status, metadata, problem.code);
    } catch (storeError) {
      run.log.error({ err: { message: (storeError as Error).message } }, `could not record the ${status} run`);
    }
    const provider = known.code === "model_error" || known.code === "model_timeout" ? providerFailureDetails(known) : undefined;
    run.log.warn({ status, code: known.code, durationMs, ...(provider && { provider }) }, "run finished");
    return known;
  }

  /** Records the run's end with its event (if any), which goes to delivery once stored (`queueEvent`). */
  /** `owner` null: whoever holds the run (a queued run is held by none). */
  private record(id: string, outcome: RunOutcome, event: NewEvent | undefined, settle: Settlement, owner: string | null = this.deps.owner): Promise<boolean> {
    return queueEvent(this.deps.delivery, event, (queued) => this.finish(id, outcome, queued, settle, owner));
  }

  /**
   * Writes a run's end (and its event) while this process holds the run. An unreachable database is
   * tried again until half the lease has passed — the run stays ours meanwhile — then the error
   * stands: nothing was written, and once the lease lapses a process reconciles the run.
   */
  private async finish(id: string, outcome: RunOutcome, event: NewEvent | undefined, settle: Settlement, owner: string | null): Promise<boolean> {
    const deadline = Date.now() + recordGraceMs(this.deps.config.limits.runLeaseMs);
    for (let delay = 100; ; delay = Math.min(delay * 2, 1_000)) {
      try {
        return await this.deps.store.runs.finish(id, outcome, event, owner ?? undefined, settle);
      } catch (error) {
        if (!isGenserveError(error) || error.code !== "storage_unavailable" || Date.now() + delay > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /** The ledger of a stored run that is not being executed here. */
  ledgerOfRecord(run: RunRecord): RunLedger {
    const alias = run.modelTag ?? "";
    return {
      id: run.id,
      operation: run.operation,
      keyId: run.keyId,
      workflowSlug: run.workflowSlug,
      modelAlias: alias,
      modelId: run.modelName ?? this.deps.config.models[alias]?.model ?? alias,
      callback: run.callback ?? undefined,
      log: this.deps.logger.child({ runId: run.id }),
      startedAt: Date.parse(run.createdAt),
      usage: { inputTokens: run.inputTokens, outputTokens: run.outputTokens },
      attempts: run.attempts,
      decoding: run.decoding ?? undefined,
      warnings: run.warnings,
    };
  }

  private metadata(run: RunLedger, modelId: string | undefined, durationMs: number): RunMetadata {
    const pricing = this.deps.config.models[run.modelAlias]?.pricing ?? { input: 0, output: 0 };
    return {
      runId: run.id,
      cost: computeCost(run.usage, pricing),
      model: { name: modelId ?? run.modelId, tag: run.modelAlias },
      durationInMs: durationMs,
      inputTokens: run.usage.inputTokens,
      outputTokens: run.usage.outputTokens,
      ...(run.warnings.length > 0 && { warnings: [...run.warnings] }),
    };
  }

  /** The callback event of a generate run, queued in the same transaction that finishes it. */
  private callbackEvent(run: RunLedger, outcome: { object?: unknown; text?: string; error?: ProblemBody }, metadata: RunMetadata, at: Date) {
    if (!run.callback || run.operation === "stream.object") return undefined;
    return { ...runEvent({ runId: run.id, keyId: run.keyId, operation: run.operation, workflowSlug: run.workflowSlug, callback: run.callback, outcome, metadata, at }), traceparent: run.span?.traceparent ?? null };
  }
}

/** The ledger of a run being executed. */
export function ledgerOf(run: Execution): RunLedger {
  const { plan } = run;
  return {
    id: plan.id,
    operation: plan.operation,
    keyId: plan.principal.keyId,
    workflowSlug: plan.workflow.slug,
    modelAlias: plan.workflow.model,
    modelId: plan.client.modelId,
    callback: plan.callback,
    log: run.log,
    startedAt: run.startedAt,
    usage: run.usage,
    attempts: run.attempts,
    decoding: run.decoding,
    warnings: run.warnings,
    span: run.span,
  };
}

/** The GenAI semantic-convention usage attributes of a run's span. */
function spanUsage(metadata: RunMetadata, attempts: number) {
  return {
    "gen_ai.response.model": metadata.model.name,
    "gen_ai.usage.input_tokens": metadata.inputTokens,
    "gen_ai.usage.output_tokens": metadata.outputTokens,
    "genserve.run.cost_usd": Number(metadata.cost),
    "genserve.run.attempts": attempts,
  };
}
