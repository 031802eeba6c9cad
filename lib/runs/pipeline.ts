import type { Logger } from "pino";
import type { AttachmentInput, RunMetadata } from "../api/requests";
import type { Config, ContextConfig, WorkflowConfig } from "../config/types";
import { runEvent } from "../delivery/events";
import { isOwnInbox } from "../delivery/own-inbox";
import { GenserveError, isGenserveError, validationError, type FieldError } from "../errors";
import { isPrivateAddress, literalAddress } from "../net/address-guard";
import { toProblem } from "../http/problem";
import { newRunId } from "../ids";
import type { Principal } from "../keys/keys";
import { providerFailureDetails, windowExceeded } from "../models/errors";
import type { ModelRegistry } from "../models/registry";
import { messageText, type ChatMessage, type DecodingMode, type ModelClient, type ModelResult, type TokenUsage } from "../models/types";
import type { PreparedSchema, SchemaCompiler } from "../schema/validator";
import type { CallbackSpec, ProblemBody, RunOperation, RunRecord, Store } from "../store/types";
import { createHash } from "node:crypto";
import type { Catalog, CatalogContext } from "../catalog/catalog";
import { canonicalJson, sha256 } from "../schema/canonical";
import { resolveAttachments } from "./attachments";
import type { DocumentExtractor } from "../attachments/extract";
import { chunkText, selectChunks } from "./chunking";
import { computeCost } from "./cost";
import { buildPrompt, retryFeedback, type Prompt } from "./prompt";
import { PartialJsonParser } from "../json/partial";
import { PartialValidator } from "./partial-validator";
import { encoderFor, eventStream, type StreamFormat } from "./stream-format";
import type { StreamHub } from "./stream-hub";
import type { ModelConfig } from "../config/types";
import type { ThreadMessage } from "../store/types";

export interface RunServiceDeps {
  config: Config;
  store: Store;
  models: ModelRegistry;
  schemas: SchemaCompiler;
  logger: Logger;
  hub: StreamHub;
  catalog: Catalog;
  /** Reads documents attached to runs, off the event loop and within limits. */
  extractor: DocumentExtractor;
  /** The service's public base URL (its own inboxes live under it). */
  publicUrl: string;
  /** Told when a run queued a callback event, so delivery starts at once. */
  onEventQueued?: () => void;
  now?: () => Date;
}

interface RunRequest {
  input: string;
  /** Required unless a thread that exists names the workflow. */
  workflowSlug?: string;
  threadId?: string;
  contextSlugs?: string[];
  attachments?: AttachmentInput[];
  schema?: Record<string, unknown>;
  callback?: CallbackSpec;
}

/** Everything resolved and checked before a run is recorded and the model is called. */
interface RunPlan {
  id: string;
  operation: RunOperation;
  principal: Principal;
  workflow: WorkflowConfig;
  client: ModelClient;
  prepared?: PreparedSchema;
  prompt: Prompt;
  log: Logger;
  startedAt: number;
  /** Tokens and attempts so far, across retries: billed and recorded whether the run succeeds or not. */
  usage: TokenUsage;
  attempts: number;
  /** How the last attempt's output was held to the schema. */
  decoding?: DecodingMode;
  /** The conversation this run belongs to: its input and output are appended when it succeeds. */
  threadId?: string;
  callback?: CallbackSpec;
}

/** What recording a run's outcome needs: which run, whose, on which model, and its tallies so far. */
interface RunLedger {
  id: string;
  operation: RunOperation;
  keyId: string;
  workflowSlug: string;
  modelAlias: string;
  /** The model's id when the provider reported none. */
  modelId: string;
  callback?: CallbackSpec;
  log: Logger;
  startedAt: number;
  usage: TokenUsage;
  attempts: number;
  decoding?: DecodingMode;
}

const ledgerOf = (plan: RunPlan): RunLedger => ({
  id: plan.id,
  operation: plan.operation,
  keyId: plan.principal.keyId,
  workflowSlug: plan.workflow.slug,
  modelAlias: plan.workflow.model,
  modelId: plan.client.modelId,
  callback: plan.callback,
  log: plan.log,
  startedAt: plan.startedAt,
  usage: plan.usage,
  attempts: plan.attempts,
  decoding: plan.decoding,
});

interface Attempted {
  value: unknown;
  modelId?: string;
}

/**
 * The run pipeline: resolve workflow → assemble prompt → call model → validate/retry → record.
 * Route handlers call one method per operation; everything else about a run happens here.
 */
export class RunService {
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly shutdown = new AbortController();
  private closing = false;
  private asyncWorkers = 0;
  private readonly now: () => Date;

  constructor(private readonly deps: RunServiceDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async generateObject(principal: Principal, request: RunRequest & { schema: Record<string, unknown> }) {
    const plan = await this.plan(principal, "generate.object", request);
    return this.track(plan, (signal) => this.executeGenerate(plan, signal)) as Promise<{ runId: string; object: unknown; metadata: RunMetadata }>;
  }

  async generateText(principal: Principal, request: RunRequest) {
    const plan = await this.plan(principal, "generate.text", request);
    return this.track(plan, (signal) => this.executeGenerate(plan, signal)) as Promise<{ runId: string; text: string; metadata: RunMetadata }>;
  }

  /**
   * An asynchronous generate run (`Prefer: respond-async`): everything is validated now, the run is
   * stored as queued with its request, and a bounded pool of workers executes it; its result goes
   * to the callback and the run record. Queued runs survive a restart.
   */
  async startAsync(principal: Principal, operation: "generate.object" | "generate.text", request: RunRequest): Promise<{ runId: string }> {
    const plan = await this.plan(principal, operation, request, { queued: true });
    this.kickQueue();
    return { runId: plan.id };
  }

  /** Starts workers for queued runs, up to `limits.asyncConcurrency` at once. */
  kickQueue(): void {
    while (!this.closing && this.asyncWorkers < this.deps.config.limits.asyncConcurrency) {
      this.asyncWorkers++;
      void this.drainQueue()
        .catch((error: unknown) => this.deps.logger.error({ err: { message: (error as Error).message } }, "async run worker failed"))
        .finally(() => this.asyncWorkers--);
    }
  }

  private async drainQueue(): Promise<void> {
    while (!this.closing) {
      const run = await this.deps.store.runs.claimQueued(this.now().toISOString());
      if (!run) return;
      const principal: Principal = { keyId: run.keyId, name: "", admin: false };
      let plan: RunPlan;
      try {
        plan = await this.plan(principal, run.operation, run.request as RunRequest, { existing: run });
      } catch (error) {
        // The request no longer plans (e.g. its workflow was removed from the configuration).
        await this.recordFailure(this.ledgerOfRecord(run), error);
        continue;
      }
      await this.track(plan, (signal) => this.executeGenerate(plan, signal)).catch(() => undefined);
    }
  }

  /** What a generate run does once planned: the object (validated, with retries) or the text. */
  private async executeGenerate(plan: RunPlan, signal: AbortSignal): Promise<{ object?: unknown; text?: string; metadata: RunMetadata }> {
    if (plan.operation === "generate.object") {
      const result = await this.attemptObject(plan, signal);
      return { object: result.value, metadata: await this.succeed(plan, result) };
    }
    let result: ModelResult | undefined;
    for (let attempt = 1; !result; attempt++) {
      plan.attempts = attempt;
      try {
        result = await plan.client.generate(this.modelRequest(plan, plan.prompt.messages, signal));
      } catch (error) {
        await this.beforeRetry(plan, error, attempt, signal);
      }
    }
    addUsage(plan.usage, result.usage);
    plan.decoding = decodingOf(plan, result);
    return { text: result.text, metadata: await this.succeed(plan, { value: result.text, modelId: result.modelId }) };
  }

  /**
   * After a crash or kill: asynchronous runs that were running are queued again (once); every other
   * run left `running` fails as `interrupted` exactly like a live failure — recorded with its
   * tallies, and with its run.failed callback event queued in the same transaction.
   */
  async recoverInterrupted(): Promise<{ failed: number; requeued: number }> {
    const { store } = this.deps;
    const requeued = await store.runs.requeueInterrupted(this.now().toISOString());
    const stranded = await store.runs.running();
    for (const run of stranded) {
      await this.recordFailure(this.ledgerOfRecord(run), new GenserveError("interrupted", { detail: "The server stopped while the run was in progress." }));
    }
    return { failed: stranded.length, requeued };
  }

  /** The ledger of a stored run (one that is not being executed here). */
  private ledgerOfRecord(run: RunRecord): RunLedger {
    const alias = run.modelTag ?? "";
    return {
      id: run.id,
      operation: run.operation,
      keyId: run.keyId,
      workflowSlug: run.workflowSlug,
      modelAlias: alias,
      modelId: run.modelName ?? this.deps.config.models[alias]?.model ?? alias,
      callback: run.callback ?? undefined,
      log: this.deps.logger.child({ runId: run.id }),
      startedAt: Date.parse(run.createdAt),
      usage: { inputTokens: run.inputTokens, outputTokens: run.outputTokens },
      attempts: run.attempts,
      decoding: (run.decoding as DecodingMode | null) ?? undefined,
    };
  }

  /**
   * Starts a streamed run. Validation, auth and planning errors are thrown before any byte is sent;
   * after that every failure ends the stream with an explicit error event. The run's events go to
   * the stream hub (kept for resuming); the response follows them. A client that disconnects does
   * not stop the run unless `cancelOnDisconnect` is set.
   */
  async streamObject(
    principal: Principal,
    request: RunRequest & { schema: Record<string, unknown> },
    options: { format: StreamFormat; cancelOnDisconnect: boolean },
  ) {
    const plan = await this.plan(principal, "stream.object", request);
    const writer = this.deps.hub.open(plan.id, principal.keyId);
    const cancel = new AbortController();
    let sent = 0;
    void this.track(
      plan,
      async (signal) => {
        const result = await this.attemptObject(plan, signal, {
          onText: (text) => {
            sent++;
            writer.push({ kind: "item", text });
          },
          onRestart: (attempt) => {
            if (sent > 0) writer.push({ kind: "restart", attempt });
          },
        });
        const metadata = await this.succeed(plan, result);
        writer.push({ kind: "done", payload: { runId: plan.id, object: result.value, metadata } });
      },
      cancel.signal,
    )
      .catch((error: unknown) => writer.push({ kind: "error", problem: toProblem(error, plan.log) }))
      .finally(() => writer.end());

    const stream = eventStream(this.deps.hub, plan.id, 0, encoderFor(options.format), {
      keepAliveMs: this.deps.config.limits.streamKeepAliveMs,
      onDisconnect: () => {
        if (options.cancelOnDisconnect) {
          plan.log.info("stream client disconnected; cancelling the run");
          cancel.abort(new GenserveError("cancelled", { detail: "The client disconnected and asked for the run to be cancelled." }));
        } else {
          plan.log.info("stream client disconnected; the run continues");
        }
      },
    });
    return { runId: plan.id, stream, contentType: encoderFor(options.format).contentType };
  }

  /** Stops taking runs, waits up to `graceMs` for in-flight ones, then aborts what is left. */
  async drain(graceMs: number): Promise<void> {
    this.closing = true;
    // Runs in flight, and asynchronous workers between claiming a run and starting it.
    const settled = async () => {
      while (this.inflight.size > 0 || this.asyncWorkers > 0) {
        await Promise.race([Promise.allSettled([...this.inflight]), new Promise((r) => setTimeout(r, 50).unref())]);
      }
    };
    await Promise.race([settled(), new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    if (this.inflight.size > 0 || this.asyncWorkers > 0) {
      this.shutdown.abort(new GenserveError("service_unavailable", { detail: "The server shut down during the run." }));
      await Promise.race([settled(), new Promise((r) => setTimeout(r, 2_000).unref())]);
    }
  }

  get activeRuns(): number {
    return this.inflight.size;
  }

  private async plan(principal: Principal, operation: RunOperation, request: RunRequest, mode: { queued?: boolean; existing?: RunRecord } = {}): Promise<RunPlan> {
    if (this.closing && !mode.existing) throw new GenserveError("service_unavailable", { detail: "The server is shutting down; retry shortly." });
    const { config, store, schemas, logger } = this.deps;
    const inputBytes = Buffer.byteLength(request.input, "utf8");
    if (inputBytes > config.limits.inputBytes) {
      throw new GenserveError("payload_too_large", {
        detail: `input is ${inputBytes} bytes; the limit is ${config.limits.inputBytes} bytes (limits.inputBytes).`,
        errors: [{ path: "/input", message: `is larger than ${config.limits.inputBytes} bytes` }],
      });
    }
    // A thread gives the run its history, and its workflow when the request names none.
    const thread = request.threadId !== undefined ? await store.threads.get(principal.keyId, request.threadId) : null;
    if (request.threadId !== undefined && !thread && request.workflowSlug === undefined) {
      throw new GenserveError("thread_not_found", {
        detail: `No thread "${request.threadId}" exists for this key.`,
        errors: [{ path: "/threadId", message: "unknown thread; send workflowSlug too to start it" }],
      });
    }
    const workflowSlug = request.workflowSlug ?? thread!.workflowSlug;
    const workflow = await this.deps.catalog.workflow(workflowSlug);
    if (!workflow) {
      throw new GenserveError("workflow_not_found", {
        detail: `No workflow "${workflowSlug}" exists.`,
        errors: [{ path: "/workflowSlug", message: `unknown workflow "${workflowSlug}"` }],
      });
    }
    const resolved = await this.resolveContexts(workflow, request.contextSlugs ?? []);
    const { contexts, chunkIds } = this.fitContexts(resolved, workflow, request.input);
    if (request.callback) await this.checkCallbackUrl(request.callback.url);
    const prepared = request.schema ? await schemas.prepare(request.schema) : undefined;
    const client = this.deps.models.get(workflow.model);
    const attachments = await resolveAttachments(request.attachments, {
      limits: config.limits,
      allowPrivate: config.network.allowPrivate,
      model: { alias: workflow.model, vision: config.models[workflow.model]!.vision },
      extractor: this.deps.extractor,
      owner: principal.keyId,
    });
    const promptParts = {
      workflow,
      contexts,
      attachments: attachments.prompt,
      images: attachments.images,
      input: request.input,
      output: prepared && { schema: prepared.schema, inPrompt: !client.capabilities.nativeStructuredOutput },
    };
    const history = thread ? fitHistory(await store.threads.messages(principal.keyId, thread.id), buildPrompt(promptParts), config.models[workflow.model]!, workflow) : [];
    const prompt = buildPrompt({ ...promptParts, history });
    // Engines that count tokens exactly (the local one) refuse a prompt that leaves no room for the
    // output now, before the run exists, and cap the output at what the window leaves; for the
    // others the prompt is estimated against the configured window, with the output's share kept.
    const measured = await client.measure?.({
      system: prompt.system,
      messages: prompt.messages,
      maxOutputTokens: workflow.maxOutputTokens,
      json: prepared && { schema: prepared.schema, hash: prepared.hash, name: "output" },
    });
    if (measured && measured.maxOutputTokens <= 0) throw windowExceeded(workflow.model, measured.promptTokens, measured.contextWindow);
    if (!measured) this.checkWindow(prompt, config.models[workflow.model]!, workflow);

    const id = mode.existing?.id ?? newRunId();
    const log = logger.child({ runId: id });
    const createdAt = this.now();
    if (request.threadId !== undefined && !thread) {
      const created = { id: request.threadId, keyId: principal.keyId, workflowSlug: workflow.slug, createdAt: createdAt.toISOString(), updatedAt: createdAt.toISOString() };
      await store.threads.create(created);
    }
    if (!mode.existing) await store.runs.insert({
      status: mode.queued ? "queued" : "running",
      // Kept until the run finishes, so that a queued run can be executed after a restart.
      request: mode.queued ? request : undefined,
      id,
      operation,
      workflowSlug: workflow.slug,
      keyId: principal.keyId,
      input: request.input,
      schema: request.schema ?? null,
      contextSlugs: contexts.map((c) => c.slug),
      contextChunks: chunkIds,
      workflowVersion: workflow.version,
      contextVersions: Object.fromEntries(resolved.map((c) => [c.slug, c.version])),
      promptHash: promptHash(prompt),
      schemaHash: prepared?.hash,
      promptTokens: measured?.promptTokens,
      outputTokenLimit: measured?.maxOutputTokens,
      attachments: attachments.meta,
      callback: request.callback ?? null,
      modelTag: workflow.model,
      createdAt: createdAt.toISOString(),
    });
    log.info({ operation, workflow: workflow.slug, keyId: principal.keyId, model: workflow.model }, mode.queued ? "run queued" : "run started");
    return {
      id,
      operation,
      principal,
      workflow,
      client,
      prepared,
      prompt,
      log,
      startedAt: createdAt.getTime(),
      usage: { inputTokens: 0, outputTokens: 0 },
      attempts: 0,
      threadId: request.threadId,
      callback: request.callback,
    };
  }

  /**
   * A prompt that cannot fit the model's configured context window (with room for the output) is
   * refused before the model is called: 413 with the numbers, in estimated tokens.
   */
  private checkWindow(prompt: Prompt, model: ModelConfig, workflow: WorkflowConfig): void {
    if (model.contextWindow === undefined) return;
    const estimate = Math.ceil((prompt.system.length + prompt.messages.reduce((n, m) => n + messageText(m.content).length, 0)) / 4);
    const room = model.contextWindow - (workflow.maxOutputTokens ?? 0);
    if (estimate > room) {
      throw new GenserveError("payload_too_large", {
        detail: `The prompt (instructions, contexts, attachments and input) is about ${estimate} tokens; model "${model.alias}" has a ${model.contextWindow}-token window${workflow.maxOutputTokens ? `, ${workflow.maxOutputTokens} of them kept for the output` : ""}.`,
      });
    }
  }

  /** A callback URL that names a private address literally is refused up front (hostnames: at delivery). */
  private async checkCallbackUrl(raw: string): Promise<void> {
    if (this.deps.config.network.allowPrivate) return;
    const url = new URL(raw);
    const literal = literalAddress(url);
    if (literal && isPrivateAddress(literal) && !(await isOwnInbox(this.deps.store, url, this.deps.publicUrl))) {
      throw validationError([{ path: "/callback/url", message: "refers to a private address; callbacks go to public addresses (network.allowPrivate is false)" }]);
    }
  }

  /**
   * Contexts larger than `limits.contextShare` of the model's window (estimated tokens) keep only
   * their chunks most relevant to the input (BM25); the chosen chunk ids are recorded on the run.
   */
  private fitContexts(contexts: CatalogContext[], workflow: WorkflowConfig, input: string): { contexts: ContextConfig[]; chunkIds: string[] } {
    const { limits, models } = this.deps.config;
    const window = models[workflow.model]!.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
    const budgetChars = Math.floor(window * limits.contextShare * 4);
    const chunkIds: string[] = [];
    const fitted = contexts.map((context) => {
      if (context.content.length <= budgetChars) return context;
      const chosen = selectChunks(chunkText(context.slug, context.content, Math.min(limits.contextChunkChars, budgetChars)), input, budgetChars);
      chunkIds.push(...chosen.map((c) => c.id));
      return { ...context, content: chosen.map((c) => c.text).join("\n\n[…]\n\n") };
    });
    return { contexts: fitted, chunkIds };
  }

  private async resolveContexts(workflow: WorkflowConfig, requested: string[]): Promise<CatalogContext[]> {
    const found = new Map<string, CatalogContext>();
    const missing: FieldError[] = [];
    for (const [i, slug] of requested.entries()) {
      const context = await this.deps.catalog.context(slug);
      if (context) found.set(slug, context);
      else missing.push({ path: `/contextSlugs/${i}`, message: `unknown context "${slug}"` });
    }
    if (missing.length > 0) {
      throw new GenserveError("context_not_found", {
        detail: `No context ${missing.map((m) => m.message.replace("unknown context ", "")).join(", ")} exists.`,
        errors: missing,
      });
    }
    for (const slug of workflow.contexts) {
      if (found.has(slug)) continue;
      const context = await this.deps.catalog.context(slug);
      // A workflow's own context removed since: the run says so rather than running without it.
      if (!context) throw new GenserveError("context_not_found", { detail: `The workflow's context "${slug}" no longer exists.` });
      found.set(slug, context);
    }
    const ordered = [...new Set([...workflow.contexts, ...requested])];
    return ordered.map((slug) => found.get(slug)!);
  }

  private modelRequest(plan: RunPlan, messages: ChatMessage[], signal: AbortSignal) {
    return {
      system: plan.prompt.system,
      messages,
      temperature: plan.workflow.temperature,
      maxOutputTokens: plan.workflow.maxOutputTokens,
      json: plan.prepared && { schema: plan.prepared.schema, hash: plan.prepared.hash, name: "output" },
      abortSignal: signal,
    };
  }

  /**
   * Calls the model until its output parses and validates, feeding the validation errors back,
   * within the workflow's retry budget. Never returns a value that does not validate.
   */
  private async attemptObject(
    plan: RunPlan,
    signal: AbortSignal,
    streaming?: { onText(text: string): void; onRestart(attempt: number): void },
  ): Promise<Attempted> {
    const prepared = plan.prepared!;
    let messages = plan.prompt.messages;
    let problems: FieldError[] = [];
    const maxAttempts = plan.workflow.retries + 1;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      plan.attempts = attempt;
      if (attempt > 1) streaming?.onRestart(attempt);
      const request = this.modelRequest(plan, messages, signal);
      let result: ModelResult;
      let parsed: ReturnType<typeof parseJsonOutput>;
      if (streaming) {
        let streamed: Awaited<ReturnType<RunService["streamAttempt"]>>;
        try {
          streamed = await this.streamAttempt(plan, request, streaming.onText, signal);
        } catch (error) {
          await this.beforeRetry(plan, error, attempt, signal);
          continue;
        }
        if ("doomed" in streamed) {
          problems = streamed.doomed;
          plan.log.warn({ attempt, problems: problems.length, at: problems[0]?.path }, "stopped early: a closed part of the output can never validate");
          messages = [...plan.prompt.messages, ...retryFeedback(streamed.text, problems)];
          continue;
        }
        result = streamed;
        parsed = streamed.parsed; // already parsed, incrementally, as it streamed
      } else {
        try {
          result = await plan.client.generate(request);
        } catch (error) {
          await this.beforeRetry(plan, error, attempt, signal);
          continue;
        }
        parsed = parseJsonOutput(result.text, true);
      }
      addUsage(plan.usage, result.usage);
      plan.decoding = decodingOf(plan, result);

      if (parsed.ok) {
        const check = await prepared.validate(parsed.value, { owner: plan.principal.keyId, signal });
        if (check.valid) return { value: parsed.value, modelId: result.modelId };
        problems = check.errors;
      } else {
        problems = [{ path: "/", message: parsed.message }];
      }
      plan.log.warn({ attempt, problems: problems.length, finishReason: result.finishReason }, "output failed validation");
      messages = [...plan.prompt.messages, ...retryFeedback(result.text, problems)];
    }
    throw new GenserveError("output_invalid", {
      detail: `The model's output did not validate against the schema after ${maxAttempts} attempt${maxAttempts > 1 ? "s" : ""}.`,
      errors: problems.slice(0, 50),
    });
  }

  /**
   * A model call failed. Failures the provider calls transient (429, 5xx, a dropped connection) are
   * retried within the workflow's retry budget (`retries`, shared with invalid outputs) and deadline,
   * after a backoff that honours Retry-After; anything else, or the last attempt, ends the run.
   */
  private async beforeRetry(plan: RunPlan, error: unknown, attempt: number, signal: AbortSignal): Promise<void> {
    const known = isGenserveError(error) ? error : null;
    if (!known || known.code !== "model_error" || !known.retryable || attempt > plan.workflow.retries || signal.aborted) throw error;
    const waitMs = Math.min(known.retryAfterMs ?? 250 * 2 ** (attempt - 1), MAX_RETRY_WAIT_MS);
    plan.log.warn({ attempt, upstreamStatus: known.upstreamStatus, provider: providerFailureDetails(known), waitMs }, "model call failed; retrying");
    await new Promise<void>((resolve, reject) => {
      const abort = () => (clearTimeout(timer), reject(signal.reason));
      const timer = setTimeout(() => (signal.removeEventListener("abort", abort), resolve()), waitMs);
      signal.addEventListener("abort", abort, { once: true });
    });
  }

  /**
   * One streamed attempt: forwards each delta, parses the text incrementally (one pass) and checks
   * every part as it closes. A part that can never satisfy the schema stops the attempt at once.
   */
  private async streamAttempt(
    plan: RunPlan,
    request: ReturnType<RunService["modelRequest"]>,
    onText: (text: string) => void,
    signal: AbortSignal,
  ): Promise<(ModelResult & { parsed: ReturnType<typeof parseJsonOutput> }) | { doomed: FieldError[]; text: string }> {
    const stop = new AbortController();
    const closed: [string, unknown][] = [];
    const parser = new PartialJsonParser((path, value) => closed.push([path, value]));
    const partial = new PartialValidator(plan.prepared!.schema, this.deps.schemas, { owner: plan.principal.keyId, signal });
    let text = "";
    let finish: Omit<ModelResult, "text"> | undefined;
    for await (const part of plan.client.stream({ ...request, abortSignal: AbortSignal.any([request.abortSignal, stop.signal]) })) {
      if (part.type === "finish") {
        finish = part;
        continue;
      }
      text += part.text;
      onText(part.text);
      parser.push(part.text);
      let doomed: FieldError[] = parser.error ? [{ path: "/", message: `the output is not valid JSON (${parser.error})` }] : [];
      while (doomed.length === 0 && closed.length > 0) {
        const [path, value] = closed.shift()!;
        doomed = await partial.check(path, value);
      }
      if (doomed.length > 0) {
        stop.abort();
        return { doomed, text };
      }
    }
    if (!finish) throw new GenserveError("model_error", { detail: "The model stream ended without finishing." });
    const parsed: ReturnType<typeof parseJsonOutput> = !parser.done
      ? { ok: false, message: text.trim() === "" ? "the output is empty; a JSON value is required" : "the output is not valid JSON (it ended before the value was complete)" }
      : { ok: true, value: parser.result() };
    return { text, ...finish, parsed };
  }

  private metadata(run: RunLedger, usage: TokenUsage, modelId: string | undefined, durationMs: number): RunMetadata {
    const pricing = this.deps.config.models[run.modelAlias]?.pricing ?? { input: 0, output: 0 };
    return {
      runId: run.id,
      cost: computeCost(usage, pricing),
      model: { name: modelId ?? run.modelId, tag: run.modelAlias },
      durationInMs: durationMs,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
    };
  }

  /** The callback event of a generate run, queued in the same transaction that finishes it. */
  private callbackEvent(run: RunLedger, outcome: { object?: unknown; text?: string; error?: ProblemBody }, metadata: RunMetadata, at: Date) {
    if (!run.callback || run.operation === "stream.object") return undefined;
    return runEvent({ runId: run.id, keyId: run.keyId, operation: run.operation, workflowSlug: run.workflowSlug, callback: run.callback, outcome, metadata, at });
  }

  private async succeed(plan: RunPlan, result: Attempted): Promise<RunMetadata> {
    const finishedAt = this.now();
    const ledger = ledgerOf(plan);
    const metadata = this.metadata(ledger, plan.usage, result.modelId, finishedAt.getTime() - plan.startedAt);
    await this.deps.store.runs.finish(plan.id, {
      status: "succeeded",
      output: result.value,
      error: null,
      modelName: metadata.model.name,
      modelTag: metadata.model.tag,
      decoding: plan.decoding ?? null,
      inputTokens: metadata.inputTokens,
      outputTokens: metadata.outputTokens,
      cost: metadata.cost,
      durationMs: metadata.durationInMs,
      attempts: plan.attempts,
      finishedAt: finishedAt.toISOString(),
    }, this.callbackEvent(ledger, { object: result.value, text: typeof result.value === "string" ? result.value : undefined }, metadata, finishedAt));
    if (plan.callback) this.deps.onEventQueued?.();
    if (plan.threadId !== undefined) {
      const at = finishedAt.toISOString();
      await this.deps.store.threads.append(
        plan.principal.keyId,
        plan.threadId,
        [
          { role: "user", content: messageText(plan.prompt.messages.at(-1)!.content), runId: plan.id, createdAt: at },
          { role: "assistant", content: typeof result.value === "string" ? result.value : JSON.stringify(result.value), runId: plan.id, createdAt: at },
        ],
        at,
      );
    }
    plan.log.info({ status: "succeeded", durationMs: metadata.durationInMs, inputTokens: metadata.inputTokens, outputTokens: metadata.outputTokens, attempts: plan.attempts }, "run finished");
    return metadata;
  }

  private fail(plan: RunPlan, error: unknown): Promise<GenserveError> {
    return this.recordFailure(ledgerOf(plan), error);
  }

  /** Records a failed run (and queues its run.failed event); returns the error as the caller sees it. */
  private async recordFailure(run: RunLedger, error: unknown): Promise<GenserveError> {
    const known = isGenserveError(error) ? error : new GenserveError("internal", { detail: "An internal error occurred.", cause: error });
    known.runId = run.id;
    const problem: ProblemBody = toProblem(known, run.log);
    const usage = run.usage;
    const finishedAt = this.now();
    const durationMs = Math.max(0, finishedAt.getTime() - run.startedAt);
    const metadata = this.metadata(run, usage, undefined, durationMs);
    try {
      await this.deps.store.runs.finish(run.id, {
        status: "failed",
        output: null,
        error: problem,
        modelName: metadata.model.name,
        modelTag: metadata.model.tag,
        decoding: run.decoding ?? null,
        inputTokens: usage.inputTokens,
        outputTokens: usage.outputTokens,
        cost: metadata.cost,
        durationMs,
        attempts: run.attempts,
        finishedAt: finishedAt.toISOString(),
      }, this.callbackEvent(run, { error: problem }, metadata, finishedAt));
      if (run.callback) this.deps.onEventQueued?.();
    } catch (storeError) {
      run.log.error({ err: { message: (storeError as Error).message } }, "could not record the failed run");
    }
    const provider = known.code === "model_error" || known.code === "model_timeout" ? providerFailureDetails(known) : undefined;
    run.log.warn({ status: "failed", code: known.code, durationMs, ...(provider && { provider }) }, "run finished");
    return known;
  }

  /** Runs `work` under the workflow's deadline and the shutdown signal, recording failure. */
  private async track<T>(plan: RunPlan, work: (signal: AbortSignal) => Promise<T>, cancel?: AbortSignal): Promise<T & { runId: string }> {
    const signal = AbortSignal.any([AbortSignal.timeout(plan.workflow.timeoutMs), this.shutdown.signal, ...(cancel ? [cancel] : [])]);
    const promise = (async () => {
      try {
        const value = await work(signal);
        return { ...value, runId: plan.id };
      } catch (error) {
        const reason = signal.reason as unknown;
        throw await this.fail(plan, signal.aborted && isGenserveError(reason) ? reason : error);
      }
    })();
    this.inflight.add(promise);
    void promise.catch(() => undefined).finally(() => this.inflight.delete(promise));
    return promise;
  }
}

function addUsage(total: TokenUsage, more: TokenUsage): void {
  total.inputTokens += more.inputTokens;
  total.outputTokens += more.outputTokens;
}

/**
 * The thread's history that fits the model's context window next to this run's prompt, measured
 * in (estimated) tokens; the oldest exchanges are dropped first.
 */
function fitHistory(messages: ThreadMessage[], prompt: Prompt, model: ModelConfig, workflow: WorkflowConfig): ChatMessage[] {
  const estimate = (text: string) => Math.ceil(text.length / 4);
  const window = model.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
  let budget = window - (workflow.maxOutputTokens ?? 1024) - estimate(prompt.system) - prompt.messages.reduce((n, m) => n + estimate(messageText(m.content)), 0);
  const kept: ChatMessage[] = [];
  // Walk back from the newest exchange, keeping whole user/assistant pairs while they fit.
  for (let i = messages.length - 1; i >= 1; i -= 2) {
    const question = messages[i - 1]!;
    const answer = messages[i]!;
    const cost = estimate(question.content) + estimate(answer.content);
    if (cost > budget) break;
    budget -= cost;
    kept.unshift({ role: question.role, content: question.content }, { role: answer.role, content: answer.content });
  }
  return kept;
}

/** A hash of exactly what the model was sent (images by their sha256), to compare runs later. */
function promptHash(prompt: Prompt): string {
  const messages = prompt.messages.map((m) => ({
    role: m.role,
    content: typeof m.content === "string" ? m.content : m.content.map((p) => (p.type === "text" ? p : { type: "image", sha256: createHash("sha256").update(p.image).digest("hex") })),
  }));
  return sha256(canonicalJson({ system: prompt.system, messages }));
}

/** The longest wait between two attempts after a transient provider failure. */
const MAX_RETRY_WAIT_MS = 5_000;

/** Assumed when a model's configuration gives no contextWindow. */
const DEFAULT_CONTEXT_WINDOW = 8192;

/** Parses a generated (not streamed) JSON output; `lenient` tolerates one surrounding code fence. */
function parseJsonOutput(text: string, lenient: boolean): { ok: true; value: unknown } | { ok: false; message: string } {
  let body = text.trim();
  if (lenient) {
    const fenced = /^```(?:json)?\s*\n?([\s\S]*?)\n?```$/.exec(body);
    if (fenced) body = fenced[1]!.trim();
  }
  if (body === "") return { ok: false, message: "the output is empty; a JSON value is required" };
  try {
    return { ok: true, value: JSON.parse(body) as unknown };
  } catch (error) {
    return { ok: false, message: `the output is not valid JSON (${(error as Error).message})` };
  }
}

/** What held an attempt's output to the schema: the adapter says when it knows. */
function decodingOf(plan: RunPlan, result: ModelResult): DecodingMode {
  if (result.decoding) return result.decoding;
  if (!plan.prepared) return "none";
  return plan.client.capabilities.nativeStructuredOutput ? "provider" : "prompt";
}
