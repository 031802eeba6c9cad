import "server-only";
import type { Logger } from "pino";
import type { CheckResult, CreateEvaluationRequest, EvaluationReport, EvaluationTarget, EvaluationTotals, SuiteDocument } from "../api/suites";
import type { Catalog } from "../catalog/catalog";
import type { Config } from "../config/types";
import { callbackUrlProblem } from "../delivery/address-policy";
import { callbackHeaders } from "../delivery/events";
import { NO_LIMITS } from "../domain/limits";
import { GenserveError, isGenserveError, toProblem, validationError, type FieldError } from "../errors";
import { newEvaluationId } from "../ids";
import { escapePointerSegment } from "../json/pointer";
import { assertWorkflowAllowed, mayRead } from "../keys/access";
import type { Principal } from "../keys/keys";
import type { RunService } from "../runs/service";
import type { RunRequest } from "../runs/types";
import { modelProblem } from "../runs/plan";
import type { EvaluationItemRecord, EvaluationRecord, EventRecord, Store } from "../store/types";
import { checkOutput, type PendingJudge } from "./expect";
import { compareWithBaseline, reportOf, sumUsd, totalsOf } from "./report";
import { readableSuite } from "./access";

export interface EvaluationServiceDeps {
  config: Config;
  store: Store;
  runs: Pick<RunService, "generateObject" | "generateText">;
  catalog: Catalog;
  logger: Logger;
  /** This process, as the holder of the evaluations it executes (leases). */
  replicaId: string;
  /** The service's public base URL (callbacks to its own inboxes). */
  publicUrl: string;
  /** Told when an evaluation queued its callback event. */
  onEventQueued?: () => void;
  now?: () => Date;
}

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
class Stopped extends Error {}

interface Job {
  caseIndex: number;
  repeat: number;
}

/**
 * Evaluations of test suites. An evaluation is stored queued with the suite as it is then; a
 * bounded number per process are claimed under a lease (renewed on a heartbeat, so a process that
 * dies hands its evaluations to another, or to itself after a restart) and executed case run by
 * case run through the ordinary run pipeline, a few at once. Each result is recorded as it comes —
 * only while the evaluation is still held, so a cancel stops it — and an evaluation resumed after
 * a crash runs only the cases it had not recorded. The last result ends it: totals, and the signed
 * evaluation.completed event in the outbox.
 */
export class EvaluationService {
  private readonly now: () => Date;
  private readonly active = new Map<string, AbortController>();
  private readonly listeners = new Map<string, Set<() => void>>();
  private workers = 0;
  private closed = false;
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(private readonly deps: EvaluationServiceDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /**
   * Starts executing queued evaluations, and a heartbeat that renews the leases of those executing
   * here and picks up any whose process died. With storage this process owns alone (SQLite), every
   * evaluation left running is resumed at once.
   */
  async start(options: { exclusive: boolean }): Promise<void> {
    if (options.exclusive) await this.deps.store.evaluations.releaseLeases();
    const leaseMs = this.deps.config.limits.runLeaseMs;
    this.heartbeat = setInterval(() => void this.beat(), Math.max(250, Math.floor(leaseMs / 3)));
    this.heartbeat.unref();
    await this.decideLeftPromotions();
    this.kick();
  }

  /** Promotions whose evaluation ended while the process deciding them died: decided now (once, by the evaluation's id). */
  private async decideLeftPromotions(): Promise<void> {
    try {
      for (const evaluation of await this.deps.store.evaluations.undecidedPromotions()) {
        const totals = evaluation.summary as EvaluationTotals | null;
        await this.decidePromotion(evaluation, evaluation.target as EvaluationTarget, totals?.passRate ?? 0, evaluation.status === "failed");
      }
    } catch (error) {
      this.deps.logger.error({ err: { message: (error as Error).message } }, "could not decide promotions left undecided");
    }
  }

  /** Checks an evaluation request against the suite, stores it queued and starts it. */
  async create(caller: Principal, slug: string, request: CreateEvaluationRequest, promotion?: EvaluationTarget["promotion"]): Promise<EvaluationRecord> {
    const { store, catalog, config } = this.deps;
    const suite = await readableSuite(store, caller, slug);
    const document = suite.document as SuiteDocument;
    const errors: FieldError[] = [];
    const workflowSlug = request.workflowSlug ?? document.workflow;
    if (workflowSlug === undefined) throw validationError([{ path: "/workflowSlug", message: "is required: the suite names no workflow" }]);
    const workflow = await catalog.resolve(workflowSlug, request.workflowSlug ? "/workflowSlug" : "/suite/workflow");
    assertWorkflowAllowed(caller, workflowSlug, "/workflowSlug");
    for (const [i, c] of document.cases.entries()) {
      for (const [pointer, e] of Object.entries(c.expect ?? {})) {
        if (e.judge === undefined) continue;
        const judge = (typeof e.judge === "string" ? undefined : e.judge.workflow) ?? document.judgeWorkflow!;
        await catalog.resolve(judge, `/suite/cases/${i}/expect/${escapePointerSegment(pointer)}/judge`);
      }
    }
    const unknownModel = request.model === undefined ? null : modelProblem(config, request.model);
    if (unknownModel) errors.push(unknownModel);
    const most = config.limits.evaluationConcurrency;
    if (request.concurrency !== undefined && request.concurrency > most) errors.push({ path: "/concurrency", message: `must be at most ${most} (limits.evaluationConcurrency)` });
    const refused = request.callback ? await callbackUrlProblem(store, request.callback.url, { allowPrivate: config.network.allowPrivate, publicUrl: this.deps.publicUrl }) : null;
    if (refused) errors.push(refused);
    if (errors.length > 0) throw validationError(errors);
    const baselineId = await this.baselineFor(caller, slug, request.baseline);
    const target: EvaluationTarget = {
      workflowSlug,
      model: request.model ?? null,
      operation: document.schema || workflow.schema ? "generate.object" : "generate.text",
      repeat: request.repeat ?? document.repeat ?? 1,
      concurrency: request.concurrency ?? most,
      baselineId,
      callback: request.callback ?? null,
      ...(promotion && { promotion }),
    };
    const evaluation = { id: newEvaluationId(), suiteSlug: slug, suiteVersion: suite.version, keyId: caller.keyId, target, document: suite.document, createdAt: this.now().toISOString() };
    await store.evaluations.insert(evaluation);
    this.deps.logger.info({ evaluationId: evaluation.id, suite: slug, workflow: workflowSlug, cases: document.cases.length, repeat: target.repeat }, "evaluation queued");
    this.kick();
    return { ...evaluation, status: "queued", summary: null, error: null, startedAt: null, finishedAt: null };
  }

  /**
   * A promotion gated by a suite: an evaluation of the suite against `slug@version`, queued like
   * any other; when it ends, the label moves to the version if the pass rate reaches `minPass`,
   * else the refusal is recorded in the label's history (decided once, by the evaluation's id).
   */
  async promote(caller: Principal, promotion: { slug: string; label: string; version: string; minPass: number; suite: string }): Promise<EvaluationRecord> {
    await this.deps.catalog.version(promotion.slug, promotion.version, "/version");
    const evaluation = await this.create(caller, promotion.suite, { workflowSlug: `${promotion.slug}@${promotion.version}` }, { slug: promotion.slug, label: promotion.label, version: promotion.version, minPass: promotion.minPass });
    return evaluation;
  }

  /** Moves (or refuses to move) the label a finished evaluation gated. */
  private async decidePromotion(evaluation: EvaluationRecord, target: EvaluationTarget, passRate: number, failed: boolean): Promise<void> {
    const promotion = target.promotion;
    if (!promotion) return;
    const passed = !failed && passRate >= promotion.minPass;
    const move = await this.deps.catalog.moveLabel(promotion.slug, promotion.label, promotion.version, evaluation.keyId, { evaluationId: evaluation.id, passRate, passed });
    if (move) this.deps.logger.info({ evaluationId: evaluation.id, workflow: promotion.slug, label: promotion.label, version: promotion.version, passRate, moved: passed }, "promotion decided");
  }

  /** "latest": the suite's newest completed evaluation the caller may read (none: no baseline); else that evaluation of this suite. */
  private async baselineFor(caller: Principal, slug: string, baseline: string | undefined): Promise<string | null> {
    if (baseline === undefined) return null;
    if (baseline === "latest") {
      const [latest] = await this.deps.store.evaluations.list({ suiteSlug: slug, status: "completed", keyId: caller.admin ? undefined : caller.keyId, limit: 1 });
      return latest?.id ?? null;
    }
    const found = await this.deps.store.evaluations.get(baseline);
    if (!found || !mayRead(caller, found.keyId)) throw new GenserveError("evaluation_not_found", { detail: `No evaluation "${baseline}" exists for this key.`, errors: [{ path: "/baseline", message: "unknown evaluation" }] });
    if (found.suiteSlug !== slug) throw validationError([{ path: "/baseline", message: `is an evaluation of suite "${found.suiteSlug}", not "${slug}"` }]);
    return found.id;
  }

  /** An evaluation the caller may read; another key's is a 404 like a missing one. */
  async readable(caller: Principal, id: string): Promise<EvaluationRecord> {
    const evaluation = await this.deps.store.evaluations.get(id);
    if (!evaluation || !mayRead(caller, evaluation.keyId)) throw new GenserveError("evaluation_not_found", { detail: `No evaluation "${id}" exists for this key.` });
    return evaluation;
  }

  /** The full report: totals, cases, fields, and the comparison with the baseline. */
  async report(caller: Principal, id: string): Promise<EvaluationReport> {
    return this.reportFor(await this.readable(caller, id));
  }

  /** The report of an evaluation already found readable (or shared by its owner). */
  async reportFor(evaluation: EvaluationRecord): Promise<EvaluationReport> {
    const id = evaluation.id;
    const report = reportOf(evaluation, await this.deps.store.evaluations.items(id));
    const baselineId = (evaluation.target as EvaluationTarget).baselineId;
    const baseline = baselineId ? await this.deps.store.evaluations.get(baselineId) : null;
    return { ...report, baseline: baseline ? compareWithBaseline(report, reportOf(baseline, await this.deps.store.evaluations.items(baseline.id))) : null };
  }

  /** Totals as they stand: stored when it ended, else from the results so far. */
  async totals(evaluation: EvaluationRecord): Promise<EvaluationTotals> {
    if (evaluation.summary) return evaluation.summary as EvaluationTotals;
    return totalsOf(evaluation.document as SuiteDocument, evaluation.target as EvaluationTarget, await this.deps.store.evaluations.items(evaluation.id));
  }

  /** Cancels a queued or running evaluation: no case run starts after this, those in flight are cancelled. */
  async cancel(caller: Principal, id: string): Promise<EvaluationRecord> {
    const evaluation = await this.readable(caller, id);
    if (!(await this.deps.store.evaluations.cancel(id, this.now().toISOString()))) {
      throw new GenserveError("conflict", { detail: `The evaluation has already ended (${evaluation.status}).` });
    }
    this.active.get(id)?.abort(new GenserveError("cancelled", { detail: "The evaluation was cancelled." }));
    this.notify(id);
    this.deps.logger.info({ evaluationId: id }, "evaluation cancelled");
    return (await this.deps.store.evaluations.get(id))!;
  }

  /** Calls `listener` whenever this process records a result of the evaluation or ends it. */
  subscribe(id: string, listener: () => void): () => void {
    const set = this.listeners.get(id) ?? new Set();
    set.add(listener);
    this.listeners.set(id, set);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(id);
    };
  }

  private notify(id: string): void {
    for (const listener of this.listeners.get(id) ?? []) listener();
  }

  /** Stops claiming evaluations; those executing stop after their case runs in flight (they resume after a restart). */
  async drain(graceMs: number): Promise<void> {
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    const deadline = Date.now() + graceMs;
    while (this.workers > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50).unref());
  }

  private kick(): void {
    while (!this.closed && this.workers < this.deps.config.limits.evaluations) {
      this.workers++;
      void this.work()
        .catch((error: unknown) => this.deps.logger.error({ err: { message: (error as Error).message } }, "evaluation worker failed"))
        .finally(() => this.workers--);
    }
  }

  private lease() {
    return { owner: this.deps.replicaId, until: new Date(this.now().getTime() + this.deps.config.limits.runLeaseMs).toISOString() };
  }

  private async beat(): Promise<void> {
    try {
      const ids = [...this.active.keys()];
      if (ids.length > 0) {
        const held = new Set(await this.deps.store.evaluations.renewLeases(this.deps.replicaId, ids, this.lease().until));
        // Cancelled through another process, or taken over: stop here.
        for (const id of ids) if (!held.has(id)) this.active.get(id)?.abort(new GenserveError("cancelled", { detail: "The evaluation was cancelled." }));
      }
      this.kick();
    } catch (error) {
      this.deps.logger.warn({ err: { message: (error as Error).message } }, "evaluation heartbeat failed; will retry");
    }
  }

  private async work(): Promise<void> {
    while (!this.closed) {
      const evaluation = await this.deps.store.evaluations.claim(this.now().toISOString(), this.lease());
      if (!evaluation) return;
      await this.execute(evaluation);
    }
  }

  private async execute(evaluation: EvaluationRecord): Promise<void> {
    const { store, logger } = this.deps;
    const log = logger.child({ evaluationId: evaluation.id });
    const controller = new AbortController();
    this.active.set(evaluation.id, controller);
    try {
      const document = evaluation.document as SuiteDocument;
      const target = evaluation.target as EvaluationTarget;
      const key = await store.keys.get(evaluation.keyId);
      if (!key || key.revokedAt !== null) {
        await this.end(evaluation, new GenserveError("unauthorized", { detail: "The key that started the evaluation was revoked." }));
        return;
      }
      const principal: Principal = { keyId: key.id, name: key.name, admin: key.admin, limits: key.limits ?? NO_LIMITS };
      const recorded = new Set((await store.evaluations.items(evaluation.id)).map((i) => `${i.caseIndex}:${i.repeat}`));
      const pending: Job[] = [];
      for (let repeat = 0; repeat < target.repeat; repeat++) {
        for (let caseIndex = 0; caseIndex < document.cases.length; caseIndex++) if (!recorded.has(`${caseIndex}:${repeat}`)) pending.push({ caseIndex, repeat });
      }
      log.info({ pending: pending.length, recorded: recorded.size }, recorded.size > 0 ? "evaluation resumed" : "evaluation started");
      let fatal: unknown = null;
      const lane = async () => {
        for (let job = pending.shift(); job && !controller.signal.aborted && !this.closed; job = pending.shift()) {
          try {
            const item = await this.runCase(evaluation.id, principal, document, target, job, controller.signal);
            if (!(await store.evaluations.recordItem(evaluation.id, this.deps.replicaId, item))) controller.abort(new Stopped());
            else this.notify(evaluation.id);
          } catch (error) {
            if (error instanceof Stopped) return;
            fatal ??= error;
            controller.abort(error);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(target.concurrency, Math.max(1, pending.length)) }, lane));
      if (fatal) await this.end(evaluation, fatal);
      else if (!controller.signal.aborted && pending.length === 0 && !this.closed) await this.end(evaluation, null);
      else if (this.closed) log.info("evaluation paused by shutdown; it resumes when a process takes it up");
    } catch (error) {
      log.error({ err: { message: (error as Error).message } }, "evaluation stopped by an error; it resumes when its lease runs out");
    } finally {
      this.active.delete(evaluation.id);
      this.notify(evaluation.id);
    }
  }

  /** Ends the evaluation: its totals, and its callback event (queued first, in the outbox). */
  private async end(evaluation: EvaluationRecord, error: unknown): Promise<void> {
    const items = await this.deps.store.evaluations.items(evaluation.id);
    const document = evaluation.document as SuiteDocument;
    const target = evaluation.target as EvaluationTarget;
    const totals = totalsOf(document, target, items);
    const problem = error === null ? null : toProblem(error);
    const finishedAt = this.now().toISOString();
    let event: Omit<EventRecord, "status" | "attempts"> | undefined;
    if (target.callback) {
      const report = { ...reportOf({ ...evaluation, status: problem ? "failed" : "completed" }, items) };
      const baseline = target.baselineId ? await this.deps.store.evaluations.get(target.baselineId) : null;
      const diff = baseline ? compareWithBaseline(report, reportOf(baseline, await this.deps.store.evaluations.items(baseline.id))) : null;
      const id = `evt_${evaluation.id.replace(/^eval_/, "")}`;
      const payload = JSON.stringify({
        type: problem ? "evaluation.failed" : "evaluation.completed",
        id,
        createdAt: finishedAt,
        data: {
          evaluationId: evaluation.id,
          suite: evaluation.suiteSlug,
          suiteVersion: evaluation.suiteVersion,
          status: problem ? "failed" : "completed",
          workflowSlug: target.workflowSlug,
          model: target.model,
          totals,
          ...(problem && { error: problem }),
          baseline: diff && { id: diff.id, newlyFailing: diff.newlyFailing.map((c) => c.case), newlyPassing: diff.newlyPassing, passRateDelta: diff.passRateDelta },
          customProperties: target.callback.customProperties ?? {},
        },
      });
      event = { id, runId: evaluation.id, keyId: evaluation.keyId, url: target.callback.url, headers: callbackHeaders(target.callback.headers), payload, nextAttemptAt: finishedAt, createdAt: finishedAt };
    }
    const ended = await this.deps.store.evaluations.finish(evaluation.id, this.deps.replicaId, { status: problem ? "failed" : "completed", summary: totals, error: problem, finishedAt }, event);
    if (ended) {
      await this.decidePromotion(evaluation, target, totals.passRate ?? 0, problem !== null);
      if (event) this.deps.onEventQueued?.();
      this.deps.logger.info({ evaluationId: evaluation.id, status: problem ? "failed" : "completed", passRate: totals.passRate, runs: totals.done }, "evaluation ended");
    }
  }

  /**
   * One case run and its checks. A refusal that passes with time (a rate limit, a busy model) is
   * waited out; one no run can pass (a revoked key, a spent budget) stops the evaluation; any other
   * failure is the case's result (`error`).
   */
  private async runCase(evaluationId: string, principal: Principal, document: SuiteDocument, target: EvaluationTarget, job: Job, signal: AbortSignal): Promise<Omit<EvaluationItemRecord, "seq">> {
    const c = document.cases[job.caseIndex]!;
    const request: RunRequest = {
      input: c.input,
      workflowSlug: target.workflowSlug,
      contextSlugs: c.contexts,
      attachments: c.attachments,
      history: c.history,
      model: target.model ?? undefined,
      ...(document.schema && { schema: document.schema }),
    };
    const base = { caseIndex: job.caseIndex, repeat: job.repeat };
    const outcome = await this.attempt(() =>
      target.operation === "generate.object"
        ? this.deps.runs.generateObject(principal, request, { signal, evaluationId }).then((r) => ({ runId: r.runId, output: r.object, metadata: r.metadata }))
        : this.deps.runs.generateText(principal, request, { signal, evaluationId }).then((r) => ({ runId: r.runId, output: r.text as unknown, metadata: r.metadata })),
      signal,
    );
    if ("error" in outcome) {
      const run = outcome.runId ? await this.deps.store.runs.get(outcome.runId) : null;
      return { ...base, runId: outcome.runId, status: "error", output: null, checks: [], error: outcome.error, durationMs: run?.durationMs ?? null, inputTokens: run?.inputTokens ?? 0, outputTokens: run?.outputTokens ?? 0, cost: run?.cost ?? "0", createdAt: this.now().toISOString() };
    }
    const { runId, output, metadata } = outcome;
    const { checks, judges } = checkOutput(output, c.expect ?? {});
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
      createdAt: this.now().toISOString(),
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
      if (signal.aborted || this.closed) throw new Stopped();
      try {
        return await run();
      } catch (error) {
        if (signal.aborted || this.closed) throw new Stopped();
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
