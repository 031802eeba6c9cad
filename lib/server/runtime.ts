import "server-only";
import path from "node:path";
import type { Logger } from "pino";
import type { Config } from "../config/config-types";
import { DocumentExtractor, EXTRACT_WORKER_FILE } from "../attachments/extract";
import { GroundingPool, GROUNDING_WORKER_FILE } from "../grounding/grounding-pool";
import { Catalog } from "../catalog/workflow-catalog";
import { DeliveryWorker } from "../delivery/worker";
import { ModelRegistry } from "../models/model-registry";
import { ensureModelFile } from "../models/model-source";
import { RunService } from "../runs/run-service";
import { EvaluationService } from "../evals/evaluation-service";
import { StreamHub } from "../runs/stream-hub";
import { SCHEMA_WORKER_FILE } from "../schema/schema-worker";
import { GRAMMAR_WORKER_FILE, GrammarWorkerPool } from "../grammar/grammar-pool";
import { SchemaCompiler } from "../schema/validator";
import { randomBytes } from "node:crypto";
import { Metrics } from "../observability/metrics";
import { Tracing } from "../observability/tracing";
import { createHttpFetch } from "../net/http-fetch";
import { openStore } from "../store/open";
import { CHECKPOINT_WORKER_FILE } from "../store/sqlite";
import type { Store } from "../store/store-types";
import { getBootOptions, type BootOptions } from "./boot";
import { createLogger } from "./logger";
import { createServices, type Services } from "./services";

/** The server's long-lived objects, built once per process from the boot options. */
export interface Runtime {
  config: Config;
  store: Store;
  schemas: SchemaCompiler;
  runs: RunService;
  /** Test-suite evaluations: queued, leased and executed case by case through `runs`. */
  evaluations: EvaluationService;
  hub: StreamHub;
  delivery: DeliveryWorker;
  catalog: Catalog;
  models: ModelRegistry;
  /** What the API's handlers read and write besides runs, evaluations and the catalog (keys, threads, inboxes, shares…). */
  services: Services;
  logger: Logger;
  metrics: Metrics;
  version: string;
  /** Where callers reach the service (built-in inbox URLs are made from it). */
  publicUrl: string;
  /** Settles when start-up work (recovering interrupted runs) is done. */
  ready: Promise<void>;
  /** Stop taking runs, finish in-flight ones (bounded), close storage. */
  shutdown(graceMs: number): Promise<void>;
}

const RUNTIME = Symbol.for("genserve.runtime");

export function createRuntime(boot: BootOptions): Runtime {
  const secrets = [
    ...Object.values(boot.config.models).flatMap((m) => [m.apiKey ?? "", ...Object.values(m.headers ?? {})]),
    boot.config.auth.oidc?.clientSecret ?? "",
  ];
  const logger = createLogger(boot.logLevel, undefined, { secrets });
  // The AI SDK prints provider warnings with console.warn; route them into the JSON log instead.
  (globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = (options: { warnings: unknown[]; provider: string; model: string }) =>
    logger.warn({ provider: options.provider, model: options.model, warnings: options.warnings }, "model provider warning");
  // Storage was migrated by `genserve serve` before the runtime starts.
  const store = openStore({
    databaseUrl: boot.databaseUrl,
    dataDir: boot.dataDir,
    pool: boot.config.database.pool,
    secretsKey: boot.config.security.secretsKey,
    checkpointWorker: path.join(boot.appRoot, CHECKPOINT_WORKER_FILE),
  });
  // This process among others sharing the storage: the owner of the runs and deliveries it takes.
  const replicaId = `replica_${randomBytes(6).toString("hex")}`;
  const schemas = new SchemaCompiler(boot.config.limits, { workerFile: path.join(boot.appRoot, SCHEMA_WORKER_FILE) });
  const extractor = new DocumentExtractor(path.join(boot.appRoot, EXTRACT_WORKER_FILE), boot.config.limits);
  // Grounding aligns outputs with documents of up to the same size, in as many workers as extraction.
  const grounding = new GroundingPool(path.join(boot.appRoot, GROUNDING_WORKER_FILE), {
    size: boot.config.limits.extractWorkers,
    memoryMb: boot.config.limits.attachmentExtractMemoryMb,
    budget: { timeMs: boot.config.limits.groundingTimeoutMs, work: boot.config.limits.groundingWork },
  });
  // Grammars for local models, as many workers as for validators, started on first use (compiles are
  // cached by schema): one slow schema's compile does not hold up another's.
  const grammars = new GrammarWorkerPool(path.join(boot.appRoot, GRAMMAR_WORKER_FILE), {
    size: boot.config.limits.schemaWorkers,
    timeoutMs: boot.config.limits.grammarCompileTimeoutMs,
    onFallback: (reason) => logger.warn({ reason }, "a schema's grammar was not built; its runs are constrained as any JSON and validated"),
  });
  let metrics: Metrics | undefined;
  const models = new ModelRegistry(boot.config, {
    localFiles: boot.localModels,
    grammars,
    log: (level, message, fields) => logger[level](fields ?? {}, message),
    onLaneWait: (alias, seconds) => metrics?.laneWaited(alias, seconds),
    fetch: createHttpFetch({ fallback: nodeFetch() }),
    // "Retry download" (admins): the same resolution `genserve serve` does at start.
    download: (source, onProgress) => ensureModelFile(source, boot.dataDir, onProgress),
  });
  const tracing = new Tracing(boot.config.observability.traces, boot.version);
  if (tracing.enabled) logger.info({ endpoint: boot.config.observability.traces.endpoint }, "exporting traces (OTLP/HTTP)");
  metrics = new Metrics({ backlog: () => store.stats(), pool: () => store.pool(), localEngines: () => models.localEngines() });
  models.warmLocal();
  // On PostgreSQL, streamed runs' events are shared through the database: a client may resume on any replica.
  const hub = new StreamHub({
    retainMs: boot.config.limits.streamRetentionMs,
    shared:
      store.kind === "postgres"
        ? { store, flushMs: boot.config.database.streamFlushMs, log: (message, fields) => logger.warn(fields, message) }
        : undefined,
  });
  const limits = boot.config.limits;
  const delivery = new DeliveryWorker(store, logger, {
    allowPrivate: boot.config.network.allowPrivate,
    scheduleMs: limits.callbackRetryScheduleMs,
    timeoutMs: limits.callbackTimeoutMs,
    concurrency: limits.callbackConcurrency,
    pollMs: limits.callbackPollMs,
    publicUrl: boot.publicUrl,
    owner: replicaId,
    onAttempt: (outcome) => metrics.deliveryAttempt(outcome),
    tracing,
  });
  // With SQLite this process owns the data alone, unless it is a helper beside a server.
  const exclusive = store.kind === "sqlite" && !boot.shared;
  delivery.start({ exclusive });
  logger.debug({ workflows: Object.keys(boot.config.workflows).length }, "runtime ready");
  const catalog = new Catalog(boot.config, store);
  const runs = new RunService({ config: boot.config, store, models, schemas, logger, hub, catalog, extractor, grounding, publicUrl: boot.publicUrl, replicaId, metrics, tracing, delivery });
  const evaluations = new EvaluationService({ config: boot.config, store, runs, catalog, logger, replicaId, publicUrl: boot.publicUrl, onEventQueued: () => delivery.kick() });
  // Runs a previous process left behind are failed (with their callbacks) or queued again — all of
  // them on SQLite, which this process owns alone; on PostgreSQL, those whose lease ran out — then
  // the heartbeat and the asynchronous queue start.
  const ready = hub
    .start()
    .then(() => runs.start({ exclusive, takeQueued: !boot.shared }))
    .then(async (recovered) => {
      // Evaluations resume after the runs they were waiting on were reconciled.
      await evaluations.start({ exclusive });
      if (recovered.failed > 0) logger.warn({ runs: recovered.failed }, "marked runs left running by a previous process as failed (interrupted)");
      if (recovered.requeued > 0) logger.warn({ runs: recovered.requeued }, "queued asynchronous runs cut by a previous process again (one retry)");
    })
    .catch((error: unknown) => logger.error({ err: { message: (error as Error).message } }, "could not recover interrupted runs"));
  let closed: Promise<void> | undefined;
  return {
    config: boot.config,
    store,
    schemas,
    runs,
    evaluations,
    hub,
    delivery,
    catalog,
    models,
    services: createServices({ store, config: boot.config, schemas, publicUrl: boot.publicUrl }),
    logger,
    metrics,
    version: boot.version,
    publicUrl: boot.publicUrl,
    ready,
    shutdown(graceMs) {
      closed ??= (async () => {
        // Evaluations stop starting case runs; those in flight finish with the runs (the rest resume after a restart).
        await Promise.all([evaluations.drain(graceMs), runs.drain(graceMs)]);
        // Storage closes only after the delivery loop has stopped: attempts in flight end within their own time-out.
        await delivery.stop(limits.callbackTimeoutMs + 1_000);
        await schemas.close();
        await extractor.close();
        await grounding.close();
        await hub.close();
        await models.dispose();
        await grammars.close();
        await tracing.shutdown();
        await store.close();
      })();
      return closed;
    },
  };
}

/**
 * Node's own fetch, for what `createHttpFetch` leaves to it. Next.js, running in this process,
 * replaces the global one with a wrapper for its data cache, which model calls never use and which
 * cost ~5% of a run's CPU when measured (docs/benchmarks.md); it keeps the original as
 * `_nextOriginalFetch`.
 */
function nodeFetch(): typeof fetch {
  const current = globalThis.fetch as typeof fetch & { _nextOriginalFetch?: typeof fetch };
  return current._nextOriginalFetch ?? current;
}

/**
 * The process's runtime, created on first use from the boot options `genserve serve` set before it
 * started Next.js (also with `--dev`). Plain `next start` / `next dev` have none and are refused.
 */
export function getRuntime(): Runtime {
  const holder = globalThis as Record<symbol, Runtime | undefined>;
  let runtime = holder[RUNTIME];
  if (!runtime) {
    const boot = getBootOptions();
    if (!boot) throw new Error("genserve was not started by `genserve serve` (use `npm start`, or `npm run dev` for development)");
    runtime = createRuntime(boot);
    holder[RUNTIME] = runtime;
  }
  return runtime;
}

export function peekRuntime(): Runtime | undefined {
  return (globalThis as Record<symbol, Runtime | undefined>)[RUNTIME];
}
