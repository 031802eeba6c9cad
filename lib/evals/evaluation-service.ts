import "server-only";
import type { Logger } from "pino";
import type { CreateEvaluationRequest, EvaluationReport, EvaluationTarget, EvaluationTotals, SuiteDocument } from "../api/suite-shapes";
import type { Catalog } from "../catalog/workflow-catalog";
import type { Config } from "../config/config-types";
import { GenserveError } from "../errors";
import { mayRead } from "../keys/owner-access";
import type { Principal } from "../keys/api-keys";
import type { RunService } from "../runs/run-service";
import type { EvaluationRecord, Store } from "../store/store-types";
import { CaseRunner } from "./case-run";
import { EvaluationCreation } from "./creation";
import { EvaluationExecutor } from "./executor";
import { EvaluationFollowers, type FollowerSink } from "./followers";
import { Promotions } from "./promotion";
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

/**
 * Evaluations of test suites, stage by stage, each in a module of its own:
 *
 *   creation (creation.ts: checked against the suite and limits, stored queued with a snapshot of the suite)
 *   → execution (executor.ts: claimed under a lease, keys taking turns for the process's slots)
 *   → case runs (case-run.ts: through the ordinary run pipeline, checked field by field, judged)
 *   → the end (totals, the callback event) and the promotion it gates (promotion.ts: once)
 *
 * followed through one reader per evaluation (followers.ts). This class is their facade: the HTTP
 * handlers and the command line call it.
 */
export class EvaluationService {
  private readonly now: () => Date;
  private readonly listeners = new Map<string, Set<() => void>>();
  private readonly snapshots: SuiteSnapshots;
  private readonly executor: EvaluationExecutor;
  private readonly followers: EvaluationFollowers;
  private readonly creation: EvaluationCreation;
  private readonly promotions: Promotions;

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
      ended: (evaluation, passRate, failed) => this.promotions.decide(evaluation, passRate, failed),
      onEventQueued: deps.onEventQueued,
    });
    this.creation = new EvaluationCreation({ config, store, catalog: deps.catalog, logger, publicUrl: deps.publicUrl, now, queued: () => this.executor.kick() });
    this.promotions = new Promotions({ store, catalog: deps.catalog, logger, create: (caller, slug, request, promotion) => this.creation.create(caller, slug, request, promotion) });
    this.followers = new EvaluationFollowers({ store, snapshots: this.snapshots, logger, pollMs: deps.followPollMs, totals: (evaluation, document) => this.totalsOf(evaluation, document) });
  }

  /**
   * Starts executing queued evaluations, and a heartbeat that renews the leases of those executing
   * here and picks up any whose process died. With storage this process owns alone (SQLite), every
   * evaluation left running is resumed at once.
   */
  async start(options: { exclusive: boolean }): Promise<void> {
    await this.executor.start(options);
    await this.promotions.decideLeft();
    this.executor.kick();
  }

  /** Stops claiming evaluations; those executing stop after their case runs in flight (they resume after a restart). */
  drain(graceMs: number): Promise<void> {
    return this.executor.drain(graceMs);
  }

  /**
   * Checks an evaluation request against the suite, stores it queued and starts it. Refused: a
   * workflow or model the key may not use (403), more case runs than `limits.evaluationRuns` (400),
   * and a key with `limits.evaluationsQueuedPerKey` evaluations queued already (429).
   */
  create(caller: Principal, slug: string, request: CreateEvaluationRequest, promotion?: EvaluationTarget["promotion"]): Promise<EvaluationRecord> {
    return this.creation.create(caller, slug, request, promotion);
  }

  /**
   * A promotion gated by a suite: an evaluation of the suite against `slug@version`, queued like
   * any other; when it ends, the label moves to the version if the pass rate reaches `minPass`,
   * else the refusal is recorded in the label's history (decided once, by the evaluation's id).
   */
  promote(caller: Principal, promotion: { slug: string; label: string; version: string; minPass: number; suite: string }): Promise<EvaluationRecord> {
    return this.promotions.promote(caller, promotion);
  }

  /** An evaluation the caller may read; another key's is a 404 like a missing one. */
  async readable(caller: Principal, id: string): Promise<EvaluationRecord> {
    const evaluation = await this.deps.store.evaluations.get(id);
    if (!evaluation || !(await mayRead(this.deps.store, caller, evaluation.keyId))) throw new GenserveError("evaluation_not_found", { detail: `No evaluation "${id}" exists for this key.` });
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
