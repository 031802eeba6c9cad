import "server-only";
import type { Logger } from "pino";
import type { RunMetadata, RunOperation } from "../domain/runs";
import { GenserveError, isGenserveError, toProblem } from "../errors";
import type { Principal } from "../keys/keys";
import type { RunRecord } from "../store/types";
import { AsyncQueue } from "./async-queue";
import { Attempts, type Attempted } from "./attempt";
import { ledgerOf, Outcomes } from "./outcome";
import { Planner, type PlannerDeps } from "./plan";
import type { StreamHub } from "./stream-hub";
import type { Execution, Plan, RunRequest } from "./types";

export interface RunServiceDeps extends PlannerDeps {
  logger: Logger;
  hub: StreamHub;
  /** This process, as the owner of the runs it executes (leases). */
  replicaId: string;
  /** Told when a run queued a callback event, so delivery starts at once. */
  onEventQueued?: () => void;
  now?: () => Date;
}

type ObjectRequest = RunRequest & { schema: Record<string, unknown> };

/**
 * The run pipeline's one orchestrator. Each operation goes through the same stages:
 *
 *   plan (plan.ts: resolve and check everything, or a 4xx — no run exists yet)
 *   → begin (store the run as running or queued)
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
  /** Runs executing in this process, by id: their leases are renewed while they run. */
  private readonly inflight = new Map<string, Promise<unknown>>();
  private heartbeat: NodeJS.Timeout | null = null;
  /** Streamed runs that a client may cancel by going away (`cancelOnDisconnect`). */
  private readonly cancellable = new Map<string, AbortController>();
  private readonly shutdown = new AbortController();
  private closing = false;
  private readonly now: () => Date;

  constructor(private readonly deps: RunServiceDeps) {
    this.now = deps.now ?? (() => new Date());
    this.planner = new Planner(deps);
    this.attempts = new Attempts(deps.schemas);
    this.outcomes = new Outcomes({ config: deps.config, store: deps.store, logger: deps.logger, onEventQueued: deps.onEventQueued, owner: deps.replicaId, now: this.now });
    this.queue = new AsyncQueue({
      store: deps.store,
      logger: deps.logger,
      concurrency: deps.config.limits.asyncConcurrency,
      now: this.now,
      lease: () => this.lease(),
      execute: (run) => this.executeQueued(run),
    });
  }

  /**
   * Starts the background work of runs: a heartbeat renewing the leases of runs executing here, and
   * reconciling runs whose process died (their lease ran out). With storage this process owns
   * alone (`exclusive`, SQLite), every run left running is stranded at start, lease or not.
   */
  async start(options: { exclusive: boolean }): Promise<{ failed: number; requeued: number }> {
    // The latest time an ISO string can say: as a string, later than every lease.
    const recovered = await this.reconcile(options.exclusive ? new Date("9999-12-31T23:59:59.999Z") : this.now());
    const leaseMs = this.deps.config.limits.runLeaseMs;
    this.heartbeat = setInterval(() => void this.beat(), Math.max(250, Math.floor(leaseMs / 3)));
    this.heartbeat.unref();
    this.queue.kick();
    return recovered;
  }

  async generateObject(principal: Principal, request: ObjectRequest): Promise<{ runId: string; object: unknown; metadata: RunMetadata }> {
    const run = await this.begin(await this.plan(principal, "generate.object", request), "running");
    const { value, metadata } = await this.track(run, (signal) => this.executeObject(run, signal));
    return { runId: run.plan.id, object: value, metadata };
  }

  async generateText(principal: Principal, request: RunRequest): Promise<{ runId: string; text: string; metadata: RunMetadata }> {
    const run = await this.begin(await this.plan(principal, "generate.text", request), "running");
    const { value, metadata } = await this.track(run, (signal) => this.executeText(run, signal));
    return { runId: run.plan.id, text: value, metadata };
  }

  /**
   * An asynchronous generate run (`Prefer: respond-async`): everything is checked now, the run is
   * stored as queued with its request, and the queue executes it; its result goes to the callback
   * and the run record.
   */
  async startAsync(principal: Principal, operation: "generate.object" | "generate.text", request: RunRequest): Promise<{ runId: string }> {
    const plan = await this.plan(principal, operation, request);
    await this.begin(plan, "queued", request);
    this.queue.kick();
    return { runId: plan.id };
  }

  /**
   * Starts a streamed run and returns its id; its events (items, restart, done or error) go to the
   * stream hub, which the HTTP response follows. Validation, auth and planning errors are thrown
   * before the run exists; after that every failure ends the stream with an error event.
   */
  async streamObject(principal: Principal, request: ObjectRequest): Promise<{ runId: string }> {
    const run = await this.begin(await this.plan(principal, "stream.object", request), "running");
    const { id } = run.plan;
    const writer = this.deps.hub.open(id, principal.keyId);
    const cancel = new AbortController();
    this.cancellable.set(id, cancel);
    let sent = 0;
    void this.track(
      run,
      async (signal) => {
        const result = await this.attempts.object(run, signal, {
          onText: (text) => {
            sent++;
            writer.push({ kind: "item", text });
          },
          onRestart: (attempt) => {
            if (sent > 0) writer.push({ kind: "restart", attempt });
          },
        });
        const metadata = await this.outcomes.succeed(run, result);
        writer.push({ kind: "done", payload: { runId: id, object: result.value, metadata } });
      },
      cancel.signal,
    )
      .catch((error: unknown) => writer.push({ kind: "error", problem: toProblem(error, run.log) }))
      .finally(() => {
        writer.end();
        this.cancellable.delete(id);
      });
    return { runId: id };
  }

  /**
   * A streamed run's client went away. The run continues (it completes and is recorded) unless the
   * client asked for `cancelOnDisconnect`, which stops generation at once (`cancelled`).
   */
  clientGone(runId: string, cancel: boolean): void {
    const log = this.deps.logger.child({ runId });
    const controller = this.cancellable.get(runId);
    if (cancel && controller) {
      log.info("stream client disconnected; cancelling the run");
      controller.abort(new GenserveError("cancelled", { detail: "The client disconnected and asked for the run to be cancelled." }));
    } else if (controller) {
      log.info("stream client disconnected; the run continues");
    }
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
          await this.outcomes.fail(this.outcomes.ledgerOfRecord(run), new GenserveError("interrupted", { detail: "The server stopped while the run was in progress." }));
          counts.failed++;
        }
      }
      if (stranded.length < 50) break;
    }
    if (counts.requeued > 0) this.queue.kick();
    return counts;
  }

  /** One heartbeat: leases of runs executing here are extended; then stranded runs are reconciled. */
  private async beat(): Promise<void> {
    const until = new Date(this.now().getTime() + this.deps.config.limits.runLeaseMs).toISOString();
    try {
      if (this.inflight.size > 0) await this.deps.store.runs.renewLeases(this.deps.replicaId, [...this.inflight.keys()], until);
      const recovered = await this.reconcile();
      if (recovered.failed + recovered.requeued > 0) this.deps.logger.warn(recovered, "reconciled runs whose process stopped");
    } catch (error) {
      this.deps.logger.warn({ err: { message: (error as Error).message } }, "run heartbeat failed; will retry");
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
    // Runs in flight, and queue workers between claiming a run and starting it.
    const settled = async () => {
      while (this.inflight.size > 0 || this.queue.busy > 0) {
        await Promise.race([Promise.allSettled([...this.inflight.values()]), new Promise((r) => setTimeout(r, 50).unref())]);
      }
    };
    await Promise.race([settled(), new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    if (this.inflight.size > 0 || this.queue.busy > 0) {
      this.shutdown.abort(new GenserveError("service_unavailable", { detail: "The server shut down during the run." }));
      await Promise.race([settled(), new Promise((r) => setTimeout(r, 2_000).unref())]);
    }
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  get activeRuns(): number {
    return this.inflight.size;
  }

  private plan(principal: Principal, operation: RunOperation, request: RunRequest): Promise<Plan> {
    if (this.closing) throw new GenserveError("service_unavailable", { detail: "The server is shutting down; retry shortly." });
    return this.planner.plan(principal, operation, request);
  }

  /** Stores the run (and a thread it starts); from here on it ends recorded, whatever happens. */
  private async begin(plan: Plan, status: "running" | "queued", request?: RunRequest): Promise<Execution> {
    const createdAt = this.now();
    const at = createdAt.toISOString();
    if (plan.thread?.isNew) {
      await this.deps.store.threads.create({ id: plan.thread.id, keyId: plan.principal.keyId, workflowSlug: plan.workflow.slug, createdAt: at, updatedAt: at });
    }
    // A queued run keeps its request until it finishes, so that it can be executed after a restart.
    await this.deps.store.runs.insert({
      ...plan.record,
      createdAt: at,
      status,
      request: status === "queued" ? request : undefined,
      lease: status === "running" ? this.lease() : undefined,
    });
    const log = this.deps.logger.child({ runId: plan.id });
    log.info({ operation: plan.operation, workflow: plan.workflow.slug, keyId: plan.principal.keyId, model: plan.workflow.model }, status === "queued" ? "run queued" : "run started");
    return this.execution(plan, createdAt.getTime(), log);
  }

  private execution(plan: Plan, startedAt: number, log: Logger): Execution {
    return { plan, log, startedAt, usage: { inputTokens: 0, outputTokens: 0 }, attempts: 0 };
  }

  /** A queued run claimed by the queue: planned again (its workflow may have changed) and executed. */
  private async executeQueued(run: RunRecord & { request: unknown }): Promise<void> {
    const key = await this.deps.store.keys.get(run.keyId);
    const principal: Principal = { keyId: run.keyId, name: key?.name ?? "", admin: key?.admin ?? false };
    let plan: Plan;
    try {
      plan = await this.planner.plan(principal, run.operation, run.request as RunRequest, run.id);
    } catch (error) {
      // The request no longer plans (e.g. its workflow was removed from the configuration).
      await this.outcomes.fail(this.outcomes.ledgerOfRecord(run), error);
      return;
    }
    const execution = this.execution(plan, this.now().getTime(), this.deps.logger.child({ runId: plan.id }));
    const work = plan.operation === "generate.object" ? (signal: AbortSignal) => this.executeObject(execution, signal) : (signal: AbortSignal) => this.executeText(execution, signal);
    await this.track(execution, work).catch(() => undefined);
  }

  private async executeObject(run: Execution, signal: AbortSignal): Promise<Attempted & { metadata: RunMetadata }> {
    const result = await this.attempts.object(run, signal);
    return { ...result, metadata: await this.outcomes.succeed(run, result) };
  }

  private async executeText(run: Execution, signal: AbortSignal): Promise<{ value: string; metadata: RunMetadata }> {
    const result = await this.attempts.text(run, signal);
    return { value: result.value, metadata: await this.outcomes.succeed(run, result) };
  }

  /** Runs `work` under the workflow's deadline and the shutdown signal; a failure is recorded and rethrown with the run id. */
  private track<T>(run: Execution, work: (signal: AbortSignal) => Promise<T>, cancel?: AbortSignal): Promise<T> {
    const signal = AbortSignal.any([AbortSignal.timeout(run.plan.workflow.timeoutMs), this.shutdown.signal, ...(cancel ? [cancel] : [])]);
    const promise = (async () => {
      try {
        return await work(signal);
      } catch (error) {
        const reason = signal.reason as unknown;
        // A deadline, a shutdown or a cancel that carries its own error is the failure to record.
        throw await this.outcomes.fail(ledgerOf(run), signal.aborted && isGenserveError(reason) ? reason : error);
      }
    })();
    this.inflight.set(run.plan.id, promise);
    void promise.catch(() => undefined).finally(() => this.inflight.delete(run.plan.id));
    return promise;
  }
}
