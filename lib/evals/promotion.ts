import "server-only";
import { DEFAULT_PROJECT_ID } from "../domain/roles";
import { ownerProject } from "../keys/owner-access";
import type { Logger } from "pino";
import { AuditLog, changesBetween, PROMOTION_ORIGIN } from "../audit/audit-log";
import type { CreateEvaluationRequest, EvaluationTarget, EvaluationTotals } from "../api/suite-shapes";
import type { Catalog } from "../catalog/workflow-catalog";
import type { Principal } from "../keys/api-keys";
import type { EvaluationRecord, Store } from "../store/store-types";

export interface PromotionsDeps {
  store: Store;
  catalog: Catalog;
  logger: Logger;
  /** Stores an evaluation queued (the creation stage). */
  create(caller: Principal, slug: string, request: CreateEvaluationRequest, promotion: EvaluationTarget["promotion"]): Promise<EvaluationRecord>;
}

/**
 * Promotions gated by a suite: an evaluation queued with the promotion in its target, and the
 * label moved (or the refusal recorded) once it ends — by the process that ended it, or, if that
 * one died first, by the next to start.
 */
export class Promotions {
  constructor(private readonly deps: PromotionsDeps) {}

  /**
   * A promotion gated by a suite: an evaluation of the suite against `slug@version`, queued like
   * any other; when it ends, the label moves to the version if the pass rate reaches `minPass`,
   * else the refusal is recorded in the label's history (decided once, by the evaluation's id).
   */
  async promote(caller: Principal, promotion: { slug: string; label: string; version: string; minPass: number; suite: string }): Promise<EvaluationRecord> {
    await this.deps.catalog.forProject(caller.projectId).version(promotion.slug, promotion.version, "/version");
    const evaluation = await this.deps.create(caller, promotion.suite, { workflowSlug: `${promotion.slug}@${promotion.version}` }, { slug: promotion.slug, label: promotion.label, version: promotion.version, minPass: promotion.minPass });
    return evaluation;
  }

  /** Moves (or refuses to move) the label a finished evaluation gated. */
  async decide(evaluation: EvaluationRecord, passRate: number, failed: boolean): Promise<void> {
    const promotion = (evaluation.target as EvaluationTarget).promotion;
    if (!promotion) return;
    const passed = !failed && passRate >= promotion.minPass;
    // The label is the project's of the key that asked for the promotion.
    const projectId = (await ownerProject(this.deps.store, evaluation.keyId)) ?? DEFAULT_PROJECT_ID;
    const move = await this.deps.catalog.forProject(projectId).moveLabel(promotion.slug, promotion.label, promotion.version, evaluation.keyId, { evaluationId: evaluation.id, passRate, passed });
    if (!move) return;
    this.deps.logger.info({ evaluationId: evaluation.id, workflow: promotion.slug, label: promotion.label, version: promotion.version, passRate, moved: passed }, "promotion decided");
    // Decided by genserve on the suite's result (the key that asked is recorded with workflow.label.promote).
    const field = `labels.${promotion.label}`;
    const gate = { gate: { after: { evaluationId: evaluation.id, passRate, minPass: promotion.minPass } } };
    await new AuditLog(this.deps.store).record({ ...PROMOTION_ORIGIN, projectId }, passed ? "workflow.label.move" : "workflow.label.refuse", { kind: "workflow", id: promotion.slug }, {
      ...(passed ? changesBetween({ [field]: move.previous }, { [field]: move.version }) : { requested: { after: promotion.version } }),
      ...gate,
    });
  }

  /** Promotions whose evaluation ended while the process deciding them died: decided now (once, by the evaluation's id). */
  async decideLeft(): Promise<void> {
    try {
      for (const evaluation of await this.deps.store.evaluations.undecidedPromotions()) {
        const totals = evaluation.summary as EvaluationTotals | null;
        await this.decide(evaluation, totals?.passRate ?? 0, evaluation.status === "failed");
      }
    } catch (error) {
      this.deps.logger.error({ err: { message: (error as Error).message } }, "could not decide promotions left undecided");
    }
  }
}
