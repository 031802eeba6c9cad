import "server-only";
import type { Logger } from "pino";
import type { CreateEvaluationRequest, EvaluationTarget, SuiteDocument } from "../api/suite-shapes";
import type { Catalog } from "../catalog/workflow-catalog";
import type { Config } from "../config/config-types";
import { callbackUrlProblem } from "../delivery/address-policy";
import { GenserveError, validationError, type FieldError } from "../errors";
import { newEvaluationId, newSnapshotId } from "../ids";
import { escapePointerSegment } from "../json/pointer";
import { assertModelAllowed, assertWorkflowAllowed, listScope, mayRead } from "../keys/owner-access";
import type { Principal } from "../keys/api-keys";
import { modelProblem } from "../runs/plan";
import type { EvaluationRecord, Store } from "../store/store-types";
import { readableSuite } from "./evaluation-access";

export interface EvaluationCreationDeps {
  config: Config;
  store: Store;
  catalog: Catalog;
  logger: Logger;
  /** The service's public base URL (callbacks to its own inboxes). */
  publicUrl: string;
  now: () => Date;
  /** Told when an evaluation was stored queued (the executor claims it). */
  queued(): void;
}

/** What a key refused for queueing too many evaluations is told to wait, in seconds (queued ones start as slots free; no end can be foreseen). */
const QUEUE_FULL_RETRY_AFTER_S = 30;

/**
 * The first stage of an evaluation: the request checked against the suite, the workflow, the
 * key's rights and the limits, the suite's snapshot stored, and the evaluation stored queued.
 */
export class EvaluationCreation {
  constructor(private readonly deps: EvaluationCreationDeps) {}

  /**
   * Checks an evaluation request against the suite, stores it queued and starts it. Refused: a
   * workflow or model the key may not use (403), more case runs than `limits.evaluationRuns` (400),
   * and a key with `limits.evaluationsQueuedPerKey` evaluations queued already (429).
   */
  async create(caller: Principal, slug: string, request: CreateEvaluationRequest, promotion?: EvaluationTarget["promotion"]): Promise<EvaluationRecord> {
    const { store, config } = this.deps;
    const catalog = this.deps.catalog.forProject(caller.projectId);
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
    const createdAt = this.deps.now().toISOString();
    const snapshotId = await store.evaluations.saveSnapshot({ id: newSnapshotId(), suiteSlug: slug, suiteVersion: suite.version, document: suite.document, createdAt });
    const evaluation = { id: newEvaluationId(), suiteSlug: slug, suiteVersion: suite.version, keyId: caller.keyId, target, snapshotId, createdAt };
    if (!(await store.evaluations.insert(evaluation, { maxQueued }))) throw queueFull();
    this.deps.logger.info({ evaluationId: evaluation.id, suite: slug, workflow: workflowSlug, cases: document.cases.length, repeat: target.repeat }, "evaluation queued");
    this.deps.queued();
    return { ...evaluation, status: "queued", summary: null, error: null, startedAt: null, finishedAt: null };
  }

  /** "latest": the suite's newest completed evaluation the caller may read (none: no baseline); else that evaluation of this suite. */
  private async baselineFor(caller: Principal, slug: string, baseline: string | undefined): Promise<string | null> {
    if (baseline === undefined) return null;
    if (baseline === "latest") {
      const [latest] = await this.deps.store.evaluations.list({ suiteSlug: slug, status: "completed", ...listScope(caller), limit: 1 });
      return latest?.id ?? null;
    }
    const found = await this.deps.store.evaluations.get(baseline);
    if (!found || !(await mayRead(this.deps.store, caller, found.keyId))) throw new GenserveError("evaluation_not_found", { detail: `No evaluation "${baseline}" exists for this key.`, errors: [{ path: "/baseline", message: "unknown evaluation" }] });
    if (found.suiteSlug !== slug) throw validationError([{ path: "/baseline", message: `is an evaluation of suite "${found.suiteSlug}", not "${slug}"` }]);
    return found.id;
  }
}
