import "server-only";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/** What the metrics read when scraped (gauges of queues and pools), supplied by the composition root. */
export interface MetricsSources {
  /** Callback events waiting for an attempt, and queued async runs. */
  backlog(): Promise<{ pendingEvents: number; queuedRuns: number }>;
  /** The PostgreSQL pool (null on SQLite). */
  pool(): { total: number; idle: number; waiting: number; max: number } | null;
  /** Each local model's lanes in use and runs waiting for one. */
  localEngines(): { alias: string; parallel: number; busy: number; waiting: number }[];
}

/** What the run pipeline reports (the Metrics class, or nothing). */
export interface RunMetrics {
  runEnded: Metrics["runEnded"];
  firstItemAfter: Metrics["firstItemAfter"];
  retried: Metrics["retried"];
  admission: Metrics["admission"];
}

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/**
 * genserve's Prometheus metrics (prom-client), in a registry of this process's own. Labels are
 * bounded sets: routes as their patterns, workflows and models as configured, key ids, error
 * codes — never run ids or inputs. Each replica serves its own; Prometheus sums over replicas.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly http: Histogram<"route" | "method" | "status">;
  private readonly runDuration: Histogram<"operation" | "workflow" | "model" | "status">;
  private readonly firstItem: Histogram<"workflow" | "model">;
  private readonly tokens: Counter<"workflow" | "model" | "key" | "direction">;
  private readonly cost: Counter<"workflow" | "model" | "key">;
  private readonly runErrors: Counter<"workflow" | "model" | "code">;
  private readonly retries: Counter<"workflow" | "model">;
  private readonly admissions: Counter<"outcome">;
  private readonly deliveries: Counter<"outcome">;
  private readonly laneWait: Histogram<"model">;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: "genserve_process_", eventLoopMonitoringPrecision: 20 });
    this.http = new Histogram({ name: "genserve_http_request_duration_seconds", help: "HTTP requests by route pattern, method and status (streams: until the response starts).", labelNames: ["route", "method", "status"], buckets: SECONDS, registers });
    this.runDuration = new Histogram({ name: "genserve_run_duration_seconds", help: "Runs from start to end, by operation, workflow, model and final status.", labelNames: ["operation", "workflow", "model", "status"], buckets: SECONDS, registers });
    this.firstItem = new Histogram({ name: "genserve_run_time_to_first_item_seconds", help: "Streamed runs: from start to the first item sent.", labelNames: ["workflow", "model"], buckets: SECONDS, registers });
    this.tokens = new Counter({ name: "genserve_tokens_total", help: "Tokens used by runs (direction: input or output).", labelNames: ["workflow", "model", "key", "direction"], registers });
    this.cost = new Counter({ name: "genserve_cost_usd_total", help: "What runs cost, in US dollars at the configured prices.", labelNames: ["workflow", "model", "key"], registers });
    this.runErrors = new Counter({ name: "genserve_run_errors_total", help: "Failed runs by error code.", labelNames: ["workflow", "model", "code"], registers });
    this.retries = new Counter({ name: "genserve_run_retries_total", help: "Model attempts after the first (invalid output, provider errors).", labelNames: ["workflow", "model"], registers });
    this.admissions = new Counter({ name: "genserve_admissions_total", help: "Runs admitted or refused by keys' limits and budgets (outcome: admitted, rpm, tpm, concurrency, daily, monthly).", labelNames: ["outcome"], registers });
    this.deliveries = new Counter({ name: "genserve_delivery_attempts_total", help: "Callback delivery attempts (outcome: delivered, failed, dead).", labelNames: ["outcome"], registers });
    this.laneWait = new Histogram({ name: "genserve_local_lane_wait_seconds", help: "Local models: how long runs waited for a free lane.", labelNames: ["model"], buckets: SECONDS, registers });

    new Gauge({
      name: "genserve_delivery_queue_depth",
      help: "Callback events waiting for an attempt (pending).",
      registers,
      async collect() {
        this.set((await sources.backlog()).pendingEvents);
      },
    });
    new Gauge({
      name: "genserve_async_queue_depth",
      help: "Asynchronous runs queued and not yet started.",
      registers,
      async collect() {
        this.set((await sources.backlog()).queuedRuns);
      },
    });
    new Gauge({
      name: "genserve_db_pool_connections",
      help: "PostgreSQL pool: connections by state (total, idle, waiting clients, max).",
      labelNames: ["state"],
      registers,
      collect() {
        const pool = sources.pool();
        if (!pool) return;
        for (const [state, value] of Object.entries(pool)) this.set({ state }, value);
      },
    });
    new Gauge({
      name: "genserve_local_lanes",
      help: "Local models: lanes configured, busy, and runs waiting for one.",
      labelNames: ["model", "state"],
      registers,
      collect() {
        for (const engine of sources.localEngines()) {
          this.set({ model: engine.alias, state: "parallel" }, engine.parallel);
          this.set({ model: engine.alias, state: "busy" }, engine.busy);
          this.set({ model: engine.alias, state: "waiting" }, engine.waiting);
        }
      },
    });
  }

  httpRequest(route: string, method: string, status: number, seconds: number): void {
    this.http.observe({ route, method, status: String(status) }, seconds);
  }

  runEnded(run: { operation: string; workflow: string; model: string; key: string; status: "succeeded" | "failed" | "cancelled"; seconds: number; inputTokens: number; outputTokens: number; costUsd: number; errorCode?: string }): void {
    this.runDuration.observe({ operation: run.operation, workflow: run.workflow, model: run.model, status: run.status }, run.seconds);
    this.tokens.inc({ workflow: run.workflow, model: run.model, key: run.key, direction: "input" }, run.inputTokens);
    this.tokens.inc({ workflow: run.workflow, model: run.model, key: run.key, direction: "output" }, run.outputTokens);
    if (run.costUsd > 0) this.cost.inc({ workflow: run.workflow, model: run.model, key: run.key }, run.costUsd);
    if (run.errorCode) this.runErrors.inc({ workflow: run.workflow, model: run.model, code: run.errorCode });
  }

  firstItemAfter(workflow: string, model: string, seconds: number): void {
    this.firstItem.observe({ workflow, model }, seconds);
  }

  retried(workflow: string, model: string): void {
    this.retries.inc({ workflow, model });
  }

  admission(outcome: string): void {
    this.admissions.inc({ outcome });
  }

  deliveryAttempt(outcome: "delivered" | "failed" | "dead"): void {
    this.deliveries.inc({ outcome });
  }

  laneWaited(model: string, seconds: number): void {
    this.laneWait.observe({ model }, seconds);
  }

  async render(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
