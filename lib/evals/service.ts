import "server-only";
import type { Logger } from "pino";
import type { CreateEvaluationRequest, EvaluationReport, EvaluationTarget, EvaluationTotals, SuiteDocument } from "../api/suites";
import type { Catalog } from "../catalog/catalog";
import type { Config } from "../config/types";
import { callbackUrlProblem } from "../delivery/address-policy";
import { GenserveError, validationError, type FieldError } from "../errors";
import { newEvaluationId, newSnapshotId } from "../ids";
import { escapePointerSegment } from "../json/pointer";
import { assertModelAllowed, assertWorkflowAllowed, mayRead } from "../keys/access";
import type { Principal } from "../keys/keys";
import type { RunService } from "../runs/service";
import { modelProblem } from "../runs/plan";
import type { EvaluationRecord, Store } from "../store/types";
import { readableSuite } from "./access";
import { CaseRunner } from "./case-run";
import { EvaluationExecutor } from "./executor";
import { EvaluationFollowers, type FollowerSink } from "./followers";
import { compareWithBaseline, reportOf, totalsOf } from "./report";
import { SuiteSnapshots } from "./snapshots";

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
  /** How often followers' readers look for results other processes recorded (default 1 s). */
  followPollMs?: number;
}

/** What a key refused for queueing too many evaluations is told to wait, in seconds (queued ones start as slots free; no end can be foreseen). */
const QUEUE_FULL_RETRY_AFTER_S = 30;

/**
 * Evaluations of test suites. An evaluation is stored queued, pointing at the suite as it is then
 * (a snapshot stored once per suite version); `EvaluationExecutor` claims and executes it case run
 * by case run through the ordinary run pipeline, keys taking turns for the process's slots;
 * followers of its progress share one reader per evaluation (`EvaluationFollowers`). Ended
 * evaluations that gate a promotion move the label (or record the refusal), once.
 */
export class EvaluationService {
  private readonly now: () => Date;
  private readonly listeners = new Map<string, Set<() => void>>();
  private readonly snapshots: SuiteSnapshots;
  private readonly executor: EvaluationExecutor;
  private readonly followers: EvaluationFollowers;

  constructor(private readonly deps: EvaluationServiceDeps) {
    const now = (this.now = deps.now ?? (() => new Date()));
    const { config, store, logger, runs, replicaId } = deps;
    this.snapshots = new SuiteSnapshots(store);
    this.executor = new EvaluationExecutor({
      config,
      store,
      logger,
      replicaId,
      now,
      snapshots: this.snapshots,
      caseRuns: (closed) => new CaseRunner({ store, runs, logger, now, closed }),
      changed: (id) => this.notify(id),
      ended: (evaluation, passRate, failed) => this.decidePromotion(evaluation, passRate, failed),
      onEventQueued: deps.onEventQueued,
    });
    this.followers = new EvaluationFollowers({ store, snapshots: this.snapshots, logger, pollMs: deps.followPollMs, totals: (evaluation, document) => this.totalsOf(evaluation, document) });
  }

  /**
   * Starts executing queued evaluations, and a heartbeat that renews the leases of those executing
   * here and picks up any whose process died. With storage this process owns alone (SQLite), every
   * evaluation left running is resumed at once.
   */
  async start(options: { exclusive: boolean }): Promise<void> {
    await this.executor.start(options);
    await this.decideLeftPromotions();
    this.executor.kick();
  }

  /** Stops claiming evaluations; those executing stop after their case runs in flight (they resume after a restart). */
  drain(graceMs: number): Promise<void> {
    return this.executor.drain(graceMs);
  }

  /** Promotions whose evaluation ended while the process deciding them died: decided now (once, by the evaluation's id). */
  private async decideLeftPromotions(): Promise<void> {
    try {
      for (const evaluation of await this.deps.store.evaluations.undecidedPromotions()) {
        const totals = evaluation.summary as EvaluationTotals | null;
        await this.decidePromotion(evaluation, totals?.passRate ?? 0, evaluation.status === "failed");
      }
    } catch (error) {
      this.deps.logger.error({ err: { message: (error as Error).message } }, "could not decide promotions left undecided");
    }
  }

  /**
   * Checks an evaluation request against the suite, stores it queued and starts it. Refused: a
   * workflow or model the key may not use (403), more case runs than `limits.evaluationRuns` (400),
   * and a key with `limits.evaluationsQueuedPerKey` evaluations queued already (429).
   */
  async create(caller: Principal, slug: string, request: CreateEvaluationRequest, promotion?: EvaluationTarget["promotion"]): Promise<EvaluationRecord> {
    const { store, catalog, config } = this.deps;
    const suite = await readableSuite(store, caller, slug);
    const document = suite.document as SuiteDocument;
    const errors: FieldError[] = [];
    const workflowSlug = request.workflowSlug ?? document.workflow;
    if (workflowSlug === undefined) throw validationError([{ path: "/workflowSlug", message: "is required: the suite names no workflow" }]);
    const workflow = await catalog.resolve(workflowSlug, request.workflowSlug ? "/workflowSlug" : "/suite/workflow");
    assertWorkflowAllowed(caller, workflowSlug, "/workflowSlug");
    // As for a run: a key limited to workflows runs them on their own models (and is not told which aliases exist).
    assertModelAllowed(caller, request.model, workflow.model);
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
    const repeat = request.repeat ?? document.repeat ?? 1;
    const runs = document.cases.length * repeat;
    if (runs > config.limits.evaluationRuns) {
      const message = `makes ${document.cases.length} cases × ${repeat} repeats = ${runs} case runs; the most one evaluation may make is ${config.limits.evaluationRuns} (limits.evaluationRuns)`;
      errors.push({ path: request.repeat !== undefined ? "/repeat" : "/suite/cases", message });
    }
    const refused = request.callback ? await callbackUrlProblem(store, request.callback.url, { allowPrivate: config.network.allowPrivate, publicUrl: this.deps.publicUrl }) : null;
    if (refused) errors.push(refused);
    if (errors.length > 0) throw validationError(errors);
    const baselineId = await this.baselineFor(caller, slug, request.baseline);
    const target: EvaluationTarget = {
      workflowSlug,
      model: request.model ?? null,
      operation: document.schema || workflow.schema ? "generate.object" : "generate.text",
      repeat,
      concurrency: request.concurrency ?? most,
      baselineId,
      callback: request.callback ?? null,
      ...(promotion && { promotion }),
    };
    const maxQueued = config.limits.evaluationsQueuedPerKey;
    // Asked first too, so that a refused evaluation stores no snapshot; the insert is the atomic check.
    const queueFull = () =>
      new GenserveError("evaluation_queue_full", {
        detail: `This key has ${maxQueued} evaluations queued, the most it may have (limits.evaluationsQueuedPerKey); start another once one of them has started.`,
        headers: { "Retry-After": String(QUEUE_FULL_RETRY_AFTER_S) },
      });
    if ((await store.evaluations.list({ keyId: caller.keyId, status: "queued", limit: maxQueued })).length >= maxQueued) throw queueFull();
    const createdAt = this.now().toISOString();
    const snapshotId = await store.evaluations.saveSnapshot({ id: newSnapshotId(), suiteSlug: slug, suiteVersion: suite.version, document: suite.document, createdAt });
    const evaluation = { id: newEvaluationId(), suiteSlug: slug, suiteVersion: suite.version, keyId: caller.keyId, target, snapshotId, createdAt };
    if (!(await store.evaluations.insert(evaluation, { maxQueued }))) throw queueFull();
    this.deps.logger.info({ evaluationId: evaluation.id, suite: slug, workflow: workflowSlug, cases: document.cases.length, repeat: target.repeat }, "evaluation queued");
    this.executor.kick();
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
  private async decidePromotion(evaluation: EvaluationRecord, passRate: number, failed: boolean): Promise<void> {
    const promotion = (evaluation.target as EvaluationTarget).promotion;
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
    const { store } = this.deps;
    const report = reportOf(evaluation, await this.snapshots.document(evaluation.snapshotId), await store.evaluations.items(evaluation.id));
    const baselineId = (evaluation.target as EvaluationTarget).baselineId;
    const baseline = baselineId ? await store.evaluations.get(baselineId) : null;
    const before = baseline && reportOf(baseline, await this.snapshots.document(baseline.snapshotId), await store.evaluations.items(baseline.id));
    return { ...report, baseline: before ? compareWithBaseline(report, before) : null };
  }

  /** Totals as they stand: stored when it ended, else from the results so far. */
  async totals(evaluation: EvaluationRecord): Promise<EvaluationTotals> {
    if (evaluation.summary) return evaluation.summary as EvaluationTotals;
    return this.totalsOf(evaluation, await this.snapshots.document(evaluation.snapshotId));
  }

  private async totalsOf(evaluation: EvaluationRecord, document: SuiteDocument): Promise<EvaluationTotals> {
    if (evaluation.summary) return evaluation.summary as EvaluationTotals;
    return totalsOf(document, evaluation.target as EvaluationTarget, await this.deps.store.evaluations.items(evaluation.id));
  }

  /** Cancels a queued or running evaluation: no case run starts after this, those in flight are cancelled. */
  async cancel(caller: Principal, id: string): Promise<EvaluationRecord> {
    const evaluation = await this.readable(caller, id);
    if (!(await this.deps.store.evaluations.cancel(id, this.now().toISOString()))) {
      throw new GenserveError("conflict", { detail: `The evaluation has already ended (${evaluation.status}).` });
    }
    this.executor.cancel(id);
    this.notify(id);
    this.deps.logger.info({ evaluationId: id }, "evaluation cancelled");
    return (await this.deps.store.evaluations.get(id))!;
  }

  /**
   * Follows an evaluation's progress from after result `after` (its results, counts and end),
   * through this process's one reader of it; the returned function stops following.
   */
  follow(evaluation: EvaluationRecord, after: number, sink: FollowerSink): () => void {
    return this.followers.follow(evaluation, after, sink);
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

  /** Tells this process's listeners and followers of the evaluation that it changed (a result recorded here, its end). */
  notify(id: string): void {
    for (const listener of this.listeners.get(id) ?? []) listener();
    this.followers.wake(id);
  }
}
