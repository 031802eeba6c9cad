import "server-only";
import { checkSchema, type SchemaCheck } from "./schema-check";
import type { Logger } from "pino";
import type { RunMetadata, RunOperation, RunStatus } from "../domain/run-vocabulary";
import { GenserveError, isGenserveError, toProblem } from "../errors";
import { principalOf, type Principal } from "../keys/api-keys";
import { NO_LIMITS } from "../domain/key-limits";
import { refusal, sweepStore } from "../keys/limit-meters";
import type { MeterState, RunRecord } from "../store/store-types";
import { AsyncQueue } from "./async-queue";
import { heartbeatEvery } from "../workers/leased-worker";
import { Attempts, countInFlight, type Attempted } from "./attempt";
import { ledgerOf, Outcomes } from "./outcome";
import type { EventDispatch } from "../delivery/worker";
import { Metering } from "./metering";
import { Planner, type PlannerDeps } from "./plan";
import type { StreamHub } from "./stream-hub";
import type { RunMetrics } from "../observability/metrics";
import { Tracing, type TraceSpan } from "../observability/tracing";
import { RunDeadline } from "./deadline";
import { cancelRequested, RunCancels, withPartial } from "./cancellation";
import type { Execution, Plan, RunOrigin, RunRequest } from "./run-request";
import type { GroundedLeaf } from "../domain/grounding";
import type { GroundingPool } from "../grounding/grounding-pool";

export interface RunServiceDeps extends PlannerDeps {
  logger: Logger;
  hub: StreamHub;
  /** This process, as the owner of the runs it executes (leases). */
  replicaId: string;
  /** Delivers runs' callback events as soon as they are stored. */
  delivery?: EventDispatch;
  metrics?: RunMetrics;
  /** Runs' traces (OpenTelemetry); absent, only incoming trace ids are recorded. */
  tracing?: Tracing;
  /** Aligns object runs' values with their sources (`grounding`, `x-grounded`); absent, runs are not grounded. */
  grounding?: GroundingPool;
  now?: () => Date;
}

/** An object run's schema is the request's, or its workflow version's default. */
type ObjectRequest = RunRequest;

const SWEEP_EVERY_MS = 5 * 60_000; // how often a process has the store forget what is long over (sweepStore)

/**
 * The run pipeline's one orchestrator. Each operation goes through the same stages:
 *
 *   plan (plan.ts: resolve and check everything, or a 4xx — no run exists yet)
 *   → begin (admit it against the key's limits and budgets; store it as running or queued)
 *   → attempt (attempt.ts: call the model, validate, retry within the budget)
 *   → outcome (outcome.ts: record success or failure, queue the callback, append to the thread)
 *
 * under the workflow's deadline and the shutdown signal (`track`). Streamed runs write their events
 * to the stream hub, which the HTTP layer follows; asynchronous runs wait in the queue
 * (async-queue.ts). Route handlers call one method per operation.
 */
export class RunService {
  private readonly planner: Planner;
  private readonly attempts: Attempts;
  private readonly outcomes: Outcomes;
  private readonly queue: AsyncQueue;
  private readonly metering: Metering;
  /** Runs executing in this process, by id: their leases are renewed while they run. */
  private readonly inflight = new Map<string, Promise<unknown>>();
  /** When this process last had the store forget meters of windows long over. */
  private lastSweep = 0;
  /** Runs executing here that a cancel (POST /runs/{id}/cancel, here or elsewhere, or a client going away) stops. */
  private readonly cancels: RunCancels;
  private readonly shutdown = new AbortController();
  private closing = false;
  private readonly now: () => Date;
  private readonly tracing: Tracing;

  constructor(private readonly deps: RunServiceDeps) {
    this.now = deps.now ?? (() => new Date());
    this.tracing = deps.tracing ?? new Tracing({ headers: {}, serviceName: "genserve", sampleRatio: 1, exportDelayMs: 1_000 }, "");
    this.planner = new Planner(deps);
    this.cancels = new RunCancels({ store: deps.store, logger: deps.logger });
    this.attempts = new Attempts(deps.schemas, deps.grounding);
    this.metering = new Metering({ config: deps.config, store: deps.store, now: this.now });
    this.outcomes = new Outcomes({ config: deps.config, store: deps.store, logger: deps.logger, delivery: deps.delivery, owner: deps.replicaId, metering: this.metering, metrics: deps.metrics, now: this.now });
    this.queue = new AsyncQueue({
      store: deps.store,
      logger: deps.logger,
      concurrency: deps.config.limits.asyncConcurrency,
      now: this.now,
      lease: () => this.lease(),
      execute: (run) => this.executeQueued(run),
      heartbeat: {
        everyMs: heartbeatEvery(deps.config.limits.runLeaseMs),
        held: () => [...this.inflight.keys()],
        renew: (ids) => this.deps.store.runs.renewLeases(this.deps.replicaId, ids, this.lease().until),
        then: () => this.beat(),
      },
    });
  }

  /**
   * Starts the background work of runs: a heartbeat renewing the leases of runs executing here, and
   * reconciling runs whose process died (their lease ran out). With storage this process owns
   * alone (`exclusive`, SQLite), every run left running is stranded at start, lease or not.
   */
  async start(options: { exclusive: boolean; /** false: leave queued asynchronous runs to other processes. */ takeQueued?: boolean }): Promise<{ failed: number; requeued: number }> {
    if (options.takeQueued === false) this.queue.close();
    // The latest time an ISO string can say: as a string, later than every lease.
    const recovered = await this.reconcile(options.exclusive ? new Date("9999-12-31T23:59:59.999Z") : this.now());
    await this.cancels.listen();
    this.queue.start();
    return recovered;
  }

  /** What an object run would make of a schema, for a workflow's model (see schema-check.ts); runs nothing. */
  checkSchema(principal: Principal, request: { schema: Record<string, unknown>; workflowSlug?: string }): Promise<SchemaCheck> {
    return checkSchema(this.deps, principal, request);
  }

  async generateObject(principal: Principal, request: ObjectRequest, origin: RunOrigin = {}): Promise<{ runId: string; object: unknown; metadata: RunMetadata; grounding?: GroundedLeaf[]; quota: MeterState[] }> {
    const run = await this.open(principal, "generate.object", request, origin, "running");
    const { value, metadata, grounding } = await this.track(run, (signal) => this.attempts.object(run, signal), origin.signal);
    return { runId: run.plan.id, object: value, metadata, ...(grounding && { grounding }), quota: run.quota };
  }

  async generateText(principal: Principal, request: RunRequest, origin: RunOrigin = {}): Promise<{ runId: string; text: string; metadata: RunMetadata; quota: MeterState[] }> {
    const run = await this.open(principal, "generate.text", request, origin, "running");
    origin.onStarted?.(run.plan.id, run.quota);
    const { value, metadata } = await this.track(run, (signal) => this.attempts.text(run, signal), origin.signal);
    return { runId: run.plan.id, text: value, metadata, quota: run.quota };
  }

  /**
   * An asynchronous generate run (`Prefer: respond-async`): everything is checked now, the run is
   * stored as queued with its request, and the queue executes it; its result goes to the callback
   * and the run record.
   */
  async startAsync(principal: Principal, operation: "generate.object" | "generate.text", request: RunRequest, origin: RunOrigin = {}): Promise<{ runId: string; quota: MeterState[] }> {
    // A key's queue is bounded (counted before admission: requests racing at the cap can pass it by those in flight).
    const cap = this.deps.config.limits.asyncQueuedPerKey;
    if ((await this.deps.store.runs.queuedCount(principal.keyId, cap)) >= cap) {
      throw new GenserveError("run_queue_full", {
        detail: `This key already has ${cap} asynchronous runs queued (limits.asyncQueuedPerKey); retry once some have started.`,
        headers: { "Retry-After": "5" },
      });
    }
    const run = await this.open(principal, operation, request, origin, "queued");
    // The submission's span ends here; the execution continues the same trace from the stored run.
    run.span.set({ "genserve.run.status": "queued" });
    run.span.end();
    this.queue.kick();
    return { runId: run.plan.id, quota: run.quota };
  }

  /**
   * Starts a streamed run and returns its id; its events (items, restart, field events when
   * `fields`, done or error) go to the stream hub, which the HTTP response follows. Validation, auth and planning errors are thrown
   * before the run exists; after that every failure ends the stream with an error event.
   */
  async streamObject(principal: Principal, request: ObjectRequest, origin: RunOrigin = {}, { fields = false } = {}): Promise<{ runId: string; quota: MeterState[] }> {
    const run = await this.open(principal, "stream.object", request, origin, "running");
    const { id } = run.plan;
    const writer = this.deps.hub.open(id, principal.keyId);
    let sent = 0;
    void this.track(
      run,
      (signal) =>
        this.attempts.object(run, signal, {
          // An attempt left behind at the deadline writes nothing more.
          onText: (text) => {
            if (signal.aborted) return;
            if (sent === 0) this.deps.metrics?.firstItemAfter(run.plan.workflow.slug, run.plan.workflow.model, (Date.now() - run.startedAt) / 1000);
            sent++;
            writer.push({ kind: "item", text });
          },
          onRestart: (attempt) => {
            if (sent > 0 && !signal.aborted) writer.push({ kind: "restart", attempt });
          },
          onField: fields ? (field) => void (signal.aborted || writer.push({ kind: "field", attempt: run.attempts, ...field })) : undefined,
        }),
    )
      .then(({ value, metadata, grounding }) => writer.push({ kind: "done", payload: { runId: id, object: value, metadata, ...(grounding && { grounding }) } }))
      .catch((error: unknown) => writer.push({ kind: "error", problem: toProblem(error, run.log) }))
      .finally(() => writer.end());
    return { runId: id, quota: run.quota };
  }

  /**
   * A streamed run's client went away. The run continues (it completes and is recorded) unless the
   * client asked for `cancelOnDisconnect`, which stops generation at once (`cancelled`).
   */
  clientGone(runId: string, cancel: boolean): void {
    const log = this.deps.logger.child({ runId });
    if (cancel && this.cancels.has(runId)) {
      log.info("stream client disconnected; cancelling the run");
      this.cancels.stop(runId, new GenserveError("cancelled", { detail: "The client disconnected and asked for the run to be cancelled." }));
    } else if (this.cancels.has(runId)) {
      log.info("stream client disconnected; the run continues");
    }
  }

  /**
   * POST /api/v1/runs/{id}/cancel (the caller may read `run`): a queued run ends `cancelled` here
   * and now; a running one is stopped where it executes — here at once, on another process when the
   * store tells it (PostgreSQL NOTIFY, or its next heartbeat: `limits.runLeaseMs / 3`) — and ends
   * `cancelled` with its tokens so far and its streamed output so far. A cancelled run answers as
   * it is (idempotent); any other finished run is a 409 `run_finished`. Waits up to `waitMs` for the
   * run to end, and says where it is.
   */
  async cancel(run: RunRecord, waitMs = 2_000): Promise<{ id: string; status: RunStatus; error: RunRecord["error"] }> {
    const answer = (r: RunRecord) => {
      // (A run cancelled before `cancelled` was a status is stored `failed` with the problem `cancelled`.)
      if (r.status === "queued" || r.status === "running" || r.status === "cancelled" || r.error?.code === "cancelled") return { id: r.id, status: r.status, error: r.error };
      throw new GenserveError("run_finished", { detail: `The run has already ${r.status}; only a queued or running run can be cancelled.`, runId: r.id });
    };
    answer(run);
    if (!(await this.deps.store.runs.requestCancel(run.id, this.now().toISOString()))) return answer((await this.deps.store.runs.get(run.id)) ?? run);
    this.deps.logger.info({ runId: run.id }, "run cancel requested");
    if (this.cancels.stop(run.id, cancelRequested())) {
      // The run's own failure (cancelled) is not this request's.
      await Promise.race([this.inflight.get(run.id)?.catch(() => undefined), new Promise((r) => setTimeout(r, waitMs).unref())]);
    } else if (run.status === "queued") {
      // Nobody executes it: it ends here (a process that claimed it meanwhile is told, and stops).
      await this.outcomes.fail(this.outcomes.ledgerOfRecord(run), cancelRequested(), { owner: null });
    } else {
      // Executing elsewhere: that process is told; its end is in the store.
      for (const until = Date.now() + waitMs; Date.now() < until; await new Promise((r) => setTimeout(r, 50).unref())) {
        if ((await this.deps.store.runs.get(run.id))?.status !== "running") break;
      }
    }
    return answer((await this.deps.store.runs.get(run.id)) ?? run);
  }

  /**
   * Runs left running by a process that died (their lease ran out by `now`): an asynchronous run
   * started fewer than twice is queued again; every other one fails as `interrupted` exactly like a
   * live failure — recorded with its tallies, its run.failed callback queued in the same transaction.
   * Each stranded run is claimed by one process, however many reconcile at once.
   */
  async reconcile(now = this.now()): Promise<{ failed: number; requeued: number }> {
    const counts = { failed: 0, requeued: 0 };
    for (;;) {
      const stranded = await this.deps.store.runs.claimStranded(now.toISOString(), this.lease(), 50);
      for (const run of stranded) {
        if (run.request !== null && run.asyncStarts < 2) {
          await this.deps.store.runs.requeue(run.id, this.now().toISOString());
          counts.requeued++;
        } else {
          // What it used before its process died is unknown: its reservations are charged in full.
          await this.outcomes.fail(this.outcomes.ledgerOfRecord(run), new GenserveError("interrupted", { detail: "The server stopped while the run was in progress." }), {
            settle: "reserved",
          });
          counts.failed++;
        }
      }
      if (stranded.length < 50) break;
    }
    if (counts.requeued > 0) this.queue.kick();
    return counts;
  }

  /** One heartbeat, after the leases of runs executing here were extended (the queue's heartbeat): missed cancels, stranded runs, old meters and sign-in records. */
  private async beat(): Promise<void> {
    // A cancel asked through another process whose announcement was missed.
    await this.cancels.check();
    const recovered = await this.reconcile();
    if (recovered.failed + recovered.requeued > 0) this.deps.logger.warn(recovered, "reconciled runs whose process stopped");
    const now = this.now();
    if (now.getTime() - this.lastSweep > SWEEP_EVERY_MS) {
      this.lastSweep = now.getTime();
      await sweepStore(this.deps.store, now, this.deps.config.auth.passwordWindowMs);
    }
  }

  /** The lease of a run this process starts executing now. */
  private lease() {
    return { owner: this.deps.replicaId, until: new Date(this.now().getTime() + this.deps.config.limits.runLeaseMs).toISOString() };
  }

  /** Stops taking runs, waits up to `graceMs` for in-flight ones, then aborts what is left. */
  async drain(graceMs: number): Promise<void> {
    this.closing = true;
    this.queue.close();
    // The heartbeat keeps renewing the leases of runs still finishing; it stops once they have.
    // Runs in flight, and queue workers between claiming a run and starting it (waited on, not polled in a loop of microtasks).
    const settled = async () => {
      while (this.inflight.size > 0 || this.queue.busy > 0) {
        await Promise.race([Promise.all([Promise.allSettled([...this.inflight.values()]), this.queue.idle(50)]), new Promise((r) => setTimeout(r, 50).unref())]);
      }
    };
    await Promise.race([settled(), new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    if (this.inflight.size > 0 || this.queue.busy > 0) {
      this.shutdown.abort(new GenserveError("service_unavailable", { detail: "The server shut down during the run." }));
      await Promise.race([settled(), new Promise((r) => setTimeout(r, 2_000).unref())]);
    }
    this.queue.stop();
    await this.cancels.close();
  }

  get activeRuns(): number {
    return this.inflight.size;
  }

  /**
   * The first stages of every operation under the run's span: plan (a child span), then begin. A
   * refusal on the way (4xx, 429, 402) ends the span with its code; no run exists then.
   */
  private async open(principal: Principal, operation: RunOperation, request: RunRequest, origin: RunOrigin, status: "running" | "queued"): Promise<Execution> {
    if (this.closing) throw new GenserveError("service_unavailable", { detail: "The server is shutting down; retry shortly." });
    const span = this.tracing.start(operation, origin.traceparent, { "genserve.operation": operation, "genserve.key.id": principal.keyId, "gen_ai.operation.name": "chat" }, "server");
    try {
      const planning = span.child("plan");
      let plan: Plan;
      try {
        plan = await this.planner.plan(principal, operation, request);
      } finally {
        planning.end();
      }
      span.set({ ...planAttributes(plan), "gen_ai.provider.name": this.deps.config.models[plan.workflow.model]?.provider ?? "" });
      return await this.begin(plan, status, request, span, origin.evaluationId);
    } catch (error) {
      const known = isGenserveError(error) ? error : null;
      span.fail(known?.code ?? "internal", known?.detail ?? "internal error");
      span.end();
      throw error;
    }
  }

  /**
   * Admits and stores the run (and a thread it starts): its worst case is reserved on the key's
   * limits and budgets in the same transaction, or it is refused (429, 402) and nothing is stored.
   * From here on it ends recorded, whatever happens.
   */
  private async begin(plan: Plan, status: "running" | "queued", request: RunRequest, span: TraceSpan, evaluationId?: string): Promise<Execution> {
    const createdAt = this.now();
    const at = createdAt.toISOString();
    // A queued run keeps its request until it finishes, so that it can be executed after a restart.
    const admission = await this.deps.store.runs.insert(
      {
        ...plan.record,
        createdAt: at,
        status,
        request: status === "queued" ? request : undefined,
        lease: status === "running" ? this.lease() : undefined,
        traceparent: span.traceparent,
        evaluationId: evaluationId ?? null,
      },
      this.metering.charges(plan, createdAt, { slot: status === "running" }),
    );
    if (!admission.ok) {
      this.deps.metrics?.admission(admission.refused.meter.split(":")[0]!);
      throw refusal(admission.refused, admission.states, createdAt);
    }
    this.deps.metrics?.admission("admitted");
    if (plan.thread?.isNew) {
      await this.deps.store.threads.create({ id: plan.thread.id, keyId: plan.principal.keyId, workflowSlug: plan.workflow.slug, createdAt: at, updatedAt: at });
    }
    const log = this.deps.logger.child({ runId: plan.id, ...(span.traceId && { traceId: span.traceId }) });
    log.info({ operation: plan.operation, workflow: plan.workflow.slug, keyId: plan.principal.keyId, model: plan.workflow.model }, status === "queued" ? "run queued" : "run started");
    return this.execution(plan, createdAt.getTime(), log, span, admission.states);
  }

  private execution(plan: Plan, startedAt: number, log: Logger, span: TraceSpan, quota: MeterState[] = []): Execution {
    const run: Execution = { plan, log, startedAt, usage: { inputTokens: 0, outputTokens: 0 }, attempts: 0, warnings: [...(plan.prepared?.warnings ?? [])], quota, span };
    run.beforeAttempt = async () => {
      this.deps.metrics?.retried(plan.workflow.slug, plan.workflow.model);
      await this.metering.reserveRetry(run);
    };
    return run;
  }

  /** A queued run claimed by the queue: planned again (its workflow may have changed) and executed. */
  private async executeQueued(run: RunRecord & { request: unknown }): Promise<void> {
    const key = await this.deps.store.keys.get(run.keyId);
    const principal: Principal = key ? principalOf(key) : { keyId: run.keyId, name: "", admin: false, role: "viewer", projectId: "", limits: NO_LIMITS, via: "key" };
    // The execution continues the trace of the request that queued the run.
    const span = this.tracing.start(`${run.operation} (queued)`, run.traceparent, { "genserve.operation": run.operation, "genserve.key.id": run.keyId, "gen_ai.operation.name": "chat" });
    if ((await this.deps.store.runs.cancelRequested([run.id])).length > 0) {
      // Cancelled while another process claimed it.
      await this.outcomes.fail({ ...this.outcomes.ledgerOfRecord(run), span }, cancelRequested());
      return;
    }
    let plan: Plan;
    try {
      plan = await this.planner.plan(principal, run.operation, run.request as RunRequest, run.id);
    } catch (error) {
      // The request no longer plans (e.g. its workflow was removed from the configuration).
      await this.outcomes.fail({ ...this.outcomes.ledgerOfRecord(run), span }, error);
      return;
    }
    span.set(planAttributes(plan));
    const log = this.deps.logger.child({ runId: plan.id, ...(span.traceId && { traceId: span.traceId }) });
    const execution = this.execution(plan, this.now().getTime(), log, span);
    const work = plan.operation === "generate.object" ? (signal: AbortSignal) => this.attempts.object(execution, signal) : (signal: AbortSignal) => this.attempts.text(execution, signal);
    await this.track(execution, work).catch(() => undefined);
  }

  /**
   * Runs the attempt stage under the workflow's deadline, the shutdown signal, `cancel` and the
   * run's own stop (`RunCancels`: a cancel request, a client gone), then records the outcome. The deadline is a timer the run owns (deadline.ts): the attempt is left
   * behind when it passes, whether or not what it waits on heeds the signal, so no run outlives it.
   * A failure is recorded and rethrown with the run id.
   */
  private track<A extends Attempted>(run: Execution, attempt: (signal: AbortSignal) => Promise<A>, cancel?: AbortSignal): Promise<A & { metadata: RunMetadata }> {
    const deadline = new RunDeadline(run.plan.workflow.timeoutMs, [this.shutdown.signal, cancel, this.cancels.register(run.plan.id)]);
    run.deadlineAt = Date.now() + run.plan.workflow.timeoutMs;
    const promise = (async () => {
      let result: A;
      try {
        result = await deadline.race(attempt);
      } catch (error) {
        const { signal } = deadline;
        const reason = signal.reason as unknown;
        const partial = run.partial;
        // An attempt left behind still streaming has its text so far counted.
        countInFlight(run);
        // A deadline, a shutdown or a cancel that carries its own error is the failure to record;
        // a cancelled run keeps its streamed output so far on its problem.
        throw await this.outcomes.fail(ledgerOf(run), signal.aborted && isGenserveError(reason) ? withPartial(reason, partial) : error);
      } finally {
        deadline.dispose();
      }
      try {
        return { ...result, metadata: await this.outcomes.succeed(run, result) };
      } catch (error) {
        throw await this.outcomes.fail(ledgerOf(run), error);
      }
    })();
    this.inflight.set(run.plan.id, promise);
    void promise
      .catch(() => undefined)
      .finally(() => {
        this.inflight.delete(run.plan.id);
        this.cancels.release(run.plan.id);
      });
    return promise;
  }
}

/** What a planned run's span says about it (GenAI semantic conventions where they apply). */
function planAttributes(plan: Plan) {
  return {
    "genserve.run.id": plan.id,
    "genserve.workflow": plan.workflow.slug,
    "genserve.model.alias": plan.workflow.model,
    "gen_ai.request.model": plan.client.modelId,
    "gen_ai.output.type": plan.operation === "generate.text" ? "text" : "json",
    ...(plan.workflow.maxOutputTokens !== undefined && { "gen_ai.request.max_tokens": plan.workflow.maxOutputTokens }),
    ...(plan.workflow.temperature !== undefined && { "gen_ai.request.temperature": plan.workflow.temperature }),
  };
}
