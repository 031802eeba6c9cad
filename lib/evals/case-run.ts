import "server-only";
import type { Logger } from "pino";
import type { CheckResult, EvaluationTarget, SuiteDocument } from "../api/suite-shapes";
import { isGenserveError, toProblem } from "../errors";
import type { Principal } from "../keys/api-keys";
import type { RunService } from "../runs/run-service";
import type { RunRequest } from "../runs/run-request";
import type { EvaluationItemRecord, Store } from "../store/store-types";
import { checkOutput, type PendingJudge } from "./expect";
import { sumUsd } from "./report";

/** Refusals that no case run of this evaluation can get past: the evaluation fails with it. */
const FATAL = new Set(["unauthorized", "forbidden", "budget_exceeded"]);
/** Refusals that pass with time: the case run waits and tries again (they are not the workflow's fault). */
const WAIT = new Set(["rate_limited", "model_busy", "model_unavailable", "storage_unavailable", "storage_full", "service_unavailable"]);
/** The most one case run waits out such refusals in all; past it, the refusal is the case's result. */
const WAIT_BUDGET_MS = 120_000;
const MAX_WAIT_MS = 30_000;

/** What a judge workflow answers. */
const JUDGE_SCHEMA = {
  type: "object",
  properties: { pass: { type: "boolean" }, reason: { type: "string", maxLength: 1000 } },
  required: ["pass", "reason"],
  additionalProperties: false,
};

/** The evaluation stopped where it was: cancelled, taken over by another process, or this one shutting down. */
export class Stopped extends Error {}

/** One case run to make: a case of the suite, one of its repeats. */
export interface Job {
  caseIndex: number;
  repeat: number;
}

export interface CaseRunnerDeps {
  store: Store;
  runs: Pick<RunService, "generateObject" | "generateText">;
  logger: Logger;
  now: () => Date;
  /** True once the process is shutting down: no case run starts after it. */
  closed: () => boolean;
}

/**
 * Case runs of evaluations: each an ordinary run through the run pipeline as the evaluation's key,
 * its output checked field by field, `judge` checks decided by a judge workflow's object run.
 */
export class CaseRunner {
  constructor(private readonly deps: CaseRunnerDeps) {}

  /**
   * One case run and its checks. A refusal that passes with time (a rate limit, a busy model) is
   * waited out; one no run can pass (a revoked key, a spent budget) stops the evaluation; any other
   * failure is the case's result (`error`).
   */
  async run(evaluationId: string, principal: Principal, document: SuiteDocument, target: EvaluationTarget, job: Job, signal: AbortSignal): Promise<Omit<EvaluationItemRecord, "seq">> {
    const c = document.cases[job.caseIndex]!;
    const request: RunRequest = {
      input: c.input,
      workflowSlug: target.workflowSlug,
      contextSlugs: c.contexts,
      attachments: c.attachments,
      history: c.history,
      model: target.model ?? undefined,
      ...(document.schema && { schema: document.schema }),
      // A `grounded` expectation needs the run's grounding.
      ...(target.operation === "generate.object" && Object.values(c.expect ?? {}).some((e) => e.grounded) && { grounding: true }),
    };
    const base = { caseIndex: job.caseIndex, repeat: job.repeat };
    const outcome = await this.attempt(() =>
      target.operation === "generate.object"
        ? this.deps.runs.generateObject(principal, request, { signal, evaluationId }).then((r) => ({ runId: r.runId, output: r.object, metadata: r.metadata, grounding: r.grounding }))
        : this.deps.runs.generateText(principal, request, { signal, evaluationId }).then((r) => ({ runId: r.runId, output: r.text as unknown, metadata: r.metadata, grounding: undefined })),
      signal,
    );
    if ("error" in outcome) {
      const run = outcome.runId ? await this.deps.store.runs.get(outcome.runId) : null;
      return { ...base, runId: outcome.runId, status: "error", output: null, checks: [], error: outcome.error, durationMs: run?.durationMs ?? null, inputTokens: run?.inputTokens ?? 0, outputTokens: run?.outputTokens ?? 0, cost: run?.cost ?? "0", createdAt: this.deps.now().toISOString() };
    }
    const { runId, output, metadata, grounding } = outcome;
    const { checks, judges } = checkOutput(output, c.expect ?? {}, grounding);
    const spent = { inputTokens: metadata.inputTokens, outputTokens: metadata.outputTokens, cost: [metadata.cost] };
    for (const judge of judges) {
      const verdict = await this.judge(evaluationId, principal, document, c.input, judge, signal);
      checks.push(verdict.check);
      spent.inputTokens += verdict.inputTokens;
      spent.outputTokens += verdict.outputTokens;
      spent.cost.push(verdict.cost);
    }
    return {
      ...base,
      runId,
      status: checks.every((check) => check.pass) ? "passed" : "failed",
      output,
      checks,
      error: null,
      durationMs: metadata.durationInMs,
      inputTokens: spent.inputTokens,
      outputTokens: spent.outputTokens,
      cost: sumUsd(spent.cost),
      createdAt: this.deps.now().toISOString(),
    };
  }

  /** A judge workflow's verdict on one field (a failed judge run fails the check, saying why). */
  private async judge(evaluationId: string, principal: Principal, document: SuiteDocument, input: string, judge: PendingJudge, signal: AbortSignal): Promise<{ check: CheckResult; inputTokens: number; outputTokens: number; cost: string }> {
    const workflowSlug = judge.workflow ?? document.judgeWorkflow!;
    const prompt = [
      "Decide whether the value below meets the criterion. Answer with pass (true or false) and a one-sentence reason.",
      `Criterion: ${judge.criterion}`,
      `Field: ${judge.path === "" ? "the whole output" : judge.path}`,
      `Value: ${judge.field.found ? JSON.stringify(judge.field.value) : "(missing)"}`,
      `The input the value was produced from:\n${input}`,
    ].join("\n\n");
    const actual = judge.field.found ? { actual: judge.field.value } : {};
    const outcome = await this.attempt(() => this.deps.runs.generateObject(principal, { input: prompt, workflowSlug, schema: JUDGE_SCHEMA }, { signal, evaluationId }), signal);
    if ("error" in outcome) {
      return { check: { path: judge.path, check: "judge", pass: false, expected: judge.criterion, ...actual, reason: `the judge run failed: ${outcome.error.code}: ${outcome.error.detail}` }, inputTokens: 0, outputTokens: 0, cost: "0" };
    }
    const verdict = outcome.object as { pass: boolean; reason: string };
    return {
      check: { path: judge.path, check: "judge", pass: verdict.pass, expected: judge.criterion, ...actual, reason: verdict.reason },
      inputTokens: outcome.metadata.inputTokens,
      outputTokens: outcome.metadata.outputTokens,
      cost: outcome.metadata.cost,
    };
  }

  /** Calls `run`, waiting out refusals that pass with time; the failure of a run that ran is returned, a fatal refusal thrown. */
  private async attempt<T>(run: () => Promise<T>, signal: AbortSignal): Promise<T | { error: ReturnType<typeof toProblem>; runId: string | null }> {
    let waited = 0;
    for (let waits = 0; ; waits++) {
      if (signal.aborted || this.deps.closed()) throw new Stopped();
      try {
        return await run();
      } catch (error) {
        if (signal.aborted || this.deps.closed()) throw new Stopped();
        const known = isGenserveError(error) ? error : null;
        if (known && FATAL.has(known.code)) throw error;
        const header = Number(known?.headers?.["Retry-After"]);
        const asked = known?.retryAfterMs ?? (Number.isFinite(header) ? header * 1000 : undefined);
        const ms = Math.min(MAX_WAIT_MS, asked ?? 250 * 2 ** Math.min(waits, 7));
        if (known && WAIT.has(known.code) && waited + ms <= WAIT_BUDGET_MS) {
          waited += ms;
          await new Promise<void>((resolve) => {
            const stop = () => {
              clearTimeout(timer);
              resolve();
            };
            const timer = setTimeout(() => {
              signal.removeEventListener("abort", stop);
              resolve();
            }, ms);
            signal.addEventListener("abort", stop, { once: true });
          });
          continue;
        }
        return { error: toProblem(error, this.deps.logger), runId: known?.runId ?? null };
      }
    }
  }
}
