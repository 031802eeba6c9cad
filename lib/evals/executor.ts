import "server-only";
import type { Logger } from "pino";
import type { EvaluationTarget, SuiteDocument } from "../api/suite-shapes";
import type { Config } from "../config/config-types";
import { callbackHeaders } from "../delivery/events";
import { NO_LIMITS } from "../domain/key-limits";
import { GenserveError, isGenserveError, toProblem } from "../errors";
import { principalOf, type Principal } from "../keys/api-keys";
import type { EvaluationRecord, EventRecord, Store } from "../store/store-types";
import { Stopped, type CaseRunner, type Job } from "./case-run";
import { compareWithBaseline, reportOf, totalsOf } from "./report";
import type { SuiteSnapshots } from "./snapshots";
import { heartbeatEvery, LeasedWorker } from "../workers/leased-worker";

/** How often, at most, an evaluation past its slice asks whether another key's evaluation is waiting. */
const GIVE_WAY_CHECK_MS = 1_000;

export interface EvaluationExecutorDeps {
  config: Config;
  store: Store;
  logger: Logger;
  /** This process, as the holder of the evaluations it executes (leases). */
  replicaId: string;
  snapshots: SuiteSnapshots;
  caseRuns: (closed: () => boolean) => CaseRunner;
  now: () => Date;
  /** Told when a result of the evaluation was recorded here, or it stopped here. */
  changed(id: string): void;
  /** Told when this process ended the evaluation (its promotion is decided then). */
  ended(evaluation: EvaluationRecord, passRate: number, failed: boolean): Promise<void>;
  /** Told when an evaluation queued its callback event. */
  onEventQueued?: () => void;
}

/**
 * The executing side of evaluations: up to `limits.evaluations` at once in this process, each
 * claimed under a lease (renewed on a heartbeat, so a process that dies hands its evaluations to
 * another, or to itself after a restart), its case runs `target.concurrency` at a time. Each
 * result is recorded only while the evaluation is still held, so a cancel stops it, and one
 * resumed runs only the cases it had not recorded. An evaluation that has held its slot for
 * `limits.evaluationSliceMs` while another key's waits gives way: it starts no more case runs and
 * goes back to the queue, where keys take turns (the store's claim). The last result ends it:
 * totals, and the signed evaluation.completed event in the outbox.
 */
export class EvaluationExecutor {
  private readonly active = new Map<string, AbortController>();
  private readonly caseRuns: CaseRunner;
  private readonly worker: LeasedWorker<EvaluationRecord>;

  constructor(private readonly deps: EvaluationExecutorDeps) {
    const { config, store, logger, replicaId } = deps;
    this.caseRuns = deps.caseRuns(() => this.closed);
    this.worker = new LeasedWorker<EvaluationRecord>({
      concurrency: config.limits.evaluations,
      // The store's claim takes one evaluation, keys taking turns; a slot that frees takes the next.
      oneAtATime: true,
      refill: "always",
      id: (evaluation) => evaluation.id,
      claim: async () => {
        const evaluation = await store.evaluations.claim(deps.now().toISOString(), this.lease());
        return evaluation ? [evaluation] : [];
      },
      work: (evaluation) => this.execute(evaluation),
      heartbeat: {
        everyMs: heartbeatEvery(config.limits.runLeaseMs),
        held: () => [...this.active.keys()],
        renew: (ids) => store.evaluations.renewLeases(replicaId, ids, this.lease().until),
        // Cancelled through another process, or taken over: stop here.
        lost: (id) => this.cancel(id),
        // Evaluations queued by other processes, or whose process died.
        then: async () => this.kick(),
      },
      onError: (error, where) => {
        const err = { message: (error as Error).message };
        if (where === "heartbeat") logger.warn({ err }, "evaluation heartbeat failed; will retry");
        else logger.error({ err }, "evaluation worker failed");
      },
    });
  }

  /** Stopped claiming (shutdown): evaluations executing start no more case runs. */
  private get closed(): boolean {
    return this.worker.closed;
  }

  /** Starts the heartbeat (claims start with the first `kick`); with storage this process owns alone (SQLite), every evaluation left running is resumed at once. */
  async start(options: { exclusive: boolean }): Promise<void> {
    if (options.exclusive) await this.deps.store.evaluations.releaseLeases();
    this.worker.start({ kick: false });
  }

  /** Stops the evaluation's case runs here (it was cancelled). */
  cancel(id: string): void {
    this.active.get(id)?.abort(new GenserveError("cancelled", { detail: "The evaluation was cancelled." }));
  }

  /** Stops claiming evaluations; those executing stop after their case runs in flight (they resume after a restart). */
  async drain(graceMs: number): Promise<void> {
    await this.worker.drain(graceMs);
  }

  /** Claims queued evaluations while this process has free slots. */
  kick(): void {
    this.worker.kick();
  }

  private lease() {
    return { owner: this.deps.replicaId, until: new Date(this.deps.now().getTime() + this.deps.config.limits.runLeaseMs).toISOString() };
  }

  private async execute(evaluation: EvaluationRecord): Promise<void> {
    const { store, logger, replicaId } = this.deps;
    const log = logger.child({ evaluationId: evaluation.id });
    const controller = new AbortController();
    this.active.set(evaluation.id, controller);
    try {
      const document = await this.deps.snapshots.document(evaluation.snapshotId).catch(async (error: unknown) => {
        // Nothing can run without it, now or after any number of takeovers: the evaluation fails.
        if (isGenserveError(error) && error.code === "suite_not_found") await this.end(evaluation, { suite: evaluation.suiteSlug, cases: [] } as unknown as SuiteDocument, error);
        throw error;
      });
      const target = evaluation.target as EvaluationTarget;
      const key = await store.keys.get(evaluation.keyId);
      if (!key || key.revokedAt !== null) {
        await this.end(evaluation, document, new GenserveError("unauthorized", { detail: "The key that started the evaluation was revoked." }));
        return;
      }
      const principal: Principal = principalOf(key);
      const recorded = new Set((await store.evaluations.items(evaluation.id)).map((i) => `${i.caseIndex}:${i.repeat}`));
      const pending: Job[] = [];
      for (let repeat = 0; repeat < target.repeat; repeat++) {
        for (let caseIndex = 0; caseIndex < document.cases.length; caseIndex++) if (!recorded.has(`${caseIndex}:${repeat}`)) pending.push({ caseIndex, repeat });
      }
      log.info({ pending: pending.length, recorded: recorded.size }, recorded.size > 0 ? "evaluation resumed" : "evaluation started");
      const slice = { started: Date.now(), checkedAt: 0, givingWay: false };
      let fatal: unknown = null;
      const lane = async () => {
        while (!controller.signal.aborted && !this.closed && !slice.givingWay) {
          const job = pending.shift();
          if (!job) return;
          try {
            const item = await this.caseRuns.run(evaluation.id, principal, document, target, job, controller.signal);
            if (!(await store.evaluations.recordItem(evaluation.id, replicaId, item))) controller.abort(new Stopped());
            else this.deps.changed(evaluation.id);
            await this.giveWay(evaluation, slice);
          } catch (error) {
            if (error instanceof Stopped) return;
            fatal ??= error;
            controller.abort(error);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(target.concurrency, Math.max(1, pending.length)) }, lane));
      if (fatal) await this.end(evaluation, document, fatal);
      else if (controller.signal.aborted) return;
      else if (this.closed) log.info("evaluation paused by shutdown; it resumes when a process takes it up");
      else if (pending.length === 0) await this.end(evaluation, document, null);
      else if (await store.evaluations.requeue(evaluation.id, replicaId)) log.info({ pending: pending.length }, "evaluation gave its slot to another key's; it resumes when its turn comes again");
    } catch (error) {
      log.error({ err: { message: (error as Error).message } }, "evaluation stopped by an error; it resumes when its lease runs out");
    } finally {
      this.active.delete(evaluation.id);
      this.deps.changed(evaluation.id);
    }
  }

  /**
   * Whether the evaluation should give its slot up: it has held it for its slice, this process has
   * no free slot (a free one takes the waiting evaluation without anyone giving way), and another
   * key's evaluation is queued. Asked between case runs, at most once a second.
   */
  private async giveWay(evaluation: EvaluationRecord, slice: { started: number; checkedAt: number; givingWay: boolean }): Promise<void> {
    const { evaluationSliceMs, evaluations } = this.deps.config.limits;
    const now = Date.now();
    if (slice.givingWay || now - slice.started < evaluationSliceMs || this.active.size < evaluations || now - slice.checkedAt < GIVE_WAY_CHECK_MS) return;
    slice.checkedAt = now;
    try {
      slice.givingWay = await this.deps.store.evaluations.othersQueued(evaluation.keyId);
    } catch (error) {
      // Not the evaluation's failure: it keeps its slot and asks again later.
      this.deps.logger.warn({ err: { message: (error as Error).message }, evaluationId: evaluation.id }, "could not ask whether another key's evaluation waits");
    }
  }

  /** Ends the evaluation: its totals, and its callback event (queued first, in the outbox). */
  private async end(evaluation: EvaluationRecord, document: SuiteDocument, error: unknown): Promise<void> {
    const { store } = this.deps;
    const items = await store.evaluations.items(evaluation.id);
    const target = evaluation.target as EvaluationTarget;
    const totals = totalsOf(document, target, items);
    const problem = error === null ? null : toProblem(error);
    const finishedAt = this.deps.now().toISOString();
    let event: Omit<EventRecord, "status" | "attempts"> | undefined;
    if (target.callback) {
      const report = { ...reportOf({ ...evaluation, status: problem ? "failed" : "completed" }, document, items) };
      const baseline = target.baselineId ? await store.evaluations.get(target.baselineId) : null;
      const diff = baseline ? compareWithBaseline(report, reportOf(baseline, await this.deps.snapshots.document(baseline.snapshotId), await store.evaluations.items(baseline.id))) : null;
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
    const ended = await store.evaluations.finish(evaluation.id, this.deps.replicaId, { status: problem ? "failed" : "completed", summary: totals, error: problem, finishedAt }, event);
    if (ended) {
      await this.deps.ended(evaluation, totals.passRate ?? 0, problem !== null);
      if (event) this.deps.onEventQueued?.();
      this.deps.logger.info({ evaluationId: evaluation.id, status: problem ? "failed" : "completed", passRate: totals.passRate, runs: totals.done }, "evaluation ended");
    }
  }
}
