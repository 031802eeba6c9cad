import "server-only";
import { createHash } from "node:crypto";
import type { DocumentExtractor } from "../attachments/extract";
import type { Catalog, CatalogContext, CatalogWorkflow } from "../catalog/workflow-catalog";
import type { Config } from "../config/config-types";
import { callbackUrlProblem } from "../delivery/address-policy";
import type { RunOperation } from "../domain/run-vocabulary";
import { GenserveError, validationError, type FieldError } from "../errors";
import { newRunId } from "../ids";
import type { Principal } from "../keys/api-keys";
import { assertModelAllowed, assertWorkflowAllowed } from "../keys/owner-access";
import { windowExceeded } from "../models/provider-errors";
import type { ModelRegistry } from "../models/model-registry";
import { canonicalJson, sha256 } from "../schema/canonical";
import type { SchemaCompiler } from "../schema/validator";
import { assertRoom } from "../store/quotas";
import type { Store } from "../store/store-types";
import { resolveAttachments } from "../attachments/resolve";
import { planGrounding } from "./grounding-check";
import { checkWindow, fitContexts, fitHistory, wholeHistory } from "./budget";
import { applyDraft } from "./draft";
import { buildPrompt, type Prompt } from "./prompt";
import { assertThreadRoom, historyBytes } from "./thread-bounds";
import type { Plan, RunRequest } from "./run-request";

export interface PlannerDeps {
  config: Config;
  store: Store;
  catalog: Catalog;
  models: ModelRegistry;
  schemas: SchemaCompiler;
  extractor: DocumentExtractor;
  /** The service's public base URL (its own inboxes live under it). */
  publicUrl: string;
}

/**
 * The first stage of a run: everything a request names is resolved and checked — thread,
 * workflow, contexts, callback address, schema, model, attachments, prompt and its budget — into a
 * typed Plan. A request that cannot succeed is refused here, with a 4xx naming the field, before
 * any run is stored. Planning has no side effects: the service stores the run.
 */
export class Planner {
  constructor(private readonly deps: PlannerDeps) {}

  /** `runId` is given for a queued run planned again when it executes. */
  async plan(principal: Principal, operation: RunOperation, request: RunRequest, runId?: string): Promise<Plan> {
    const { config, store, schemas } = this.deps;
    const inputBytes = Buffer.byteLength(request.input, "utf8");
    if (inputBytes > config.limits.inputBytes) {
      throw new GenserveError("payload_too_large", {
        detail: `input is ${inputBytes} bytes; the limit is ${config.limits.inputBytes} bytes (limits.inputBytes).`,
        errors: [{ path: "/input", message: `is larger than ${config.limits.inputBytes} bytes` }],
      });
    }
    // A thread gives the run its history, and its workflow when the request names none.
    const thread = request.threadId !== undefined ? await store.threads.get(principal.keyId, request.threadId) : null;
    if (request.threadId !== undefined) assertThreadRoom(thread, inputBytes, config.limits);
    // Workflows, contexts and labels are the caller's project's.
    const catalog = this.deps.catalog.forProject(principal.projectId);
    const resolvedVersion = await this.workflow(catalog, request, thread?.workflowSlug);
    assertWorkflowAllowed(principal, resolvedVersion.slug, request.workflowSlug !== undefined ? "/workflowSlug" : "/threadId");
    // A draft runs the version with its edits applied; the version itself stays as it was saved.
    const drafted = request.draft ? await applyDraft({ config, catalog }, principal, resolvedVersion, request.draft) : null;
    const named = drafted?.workflow ?? resolvedVersion;
    // A run that would start a thread the key has no room for is refused before anything is stored
    // (runs starting threads at the same moment can pass the cap by as many as are in flight).
    if (request.threadId !== undefined && thread === null) {
      assertRoom({ resource: "threads", limit: config.limits.threadsPerKey }, await store.quotas.count(principal.keyId, "threads", new Date().toISOString()));
    }
    // Object runs without a schema use the workflow version's own.
    const schema = operation === "generate.text" ? undefined : (request.schema ?? named.schema);
    if (operation !== "generate.text" && schema === undefined) {
      throw validationError([{ path: "/schema", message: `is required: workflow "${named.slug}" (version ${named.version}) has no default schema` }]);
    }
    // Before the alias is looked up: a key limited to workflows is not told which aliases exist.
    assertModelAllowed(principal, request.model, named.model);
    const unknown = request.model === undefined ? null : modelProblem(config, request.model);
    if (unknown) throw validationError([unknown]);
    const workflow = request.model === undefined ? named : { ...named, model: request.model };
    const model = config.models[workflow.model]!;
    const resolved = await this.contexts(catalog, workflow, request.contextSlugs ?? [], request.contextVersions);
    const { contexts, chunkIds } = fitContexts(resolved, model, request.input, config.limits);
    if (request.callback) {
      const refused = await callbackUrlProblem(store, request.callback.url, { allowPrivate: config.network.allowPrivate, publicUrl: this.deps.publicUrl });
      if (refused) throw validationError([refused]);
    }
    const prepared = schema ? await schemas.prepare(schema) : undefined;
    const client = this.deps.models.get(workflow.model);
    const attachments = await resolveAttachments(request.attachments, {
      limits: config.limits,
      allowPrivate: config.network.allowPrivate,
      model: { alias: workflow.model, vision: model.vision },
      extractor: this.deps.extractor,
      owner: principal.keyId,
    });
    // A replay fetches its URL attachments again: they must still be the bytes the original run read.
    for (const [i, expected] of (request.attachmentHashes ?? []).entries()) {
      const got = attachments.meta[i];
      if (got && got.sha256 !== expected) {
        throw new GenserveError("conflict", {
          detail: `Attachment ${i} (${got.url ?? "inline"}) has changed since the original run (sha256 ${expected.slice(0, 12)}… then, ${got.sha256.slice(0, 12)}… now); the run cannot be replayed exactly.`,
          errors: [{ path: `/attachments/${i}`, message: "changed since the original run" }],
        });
      }
    }
    const parts = {
      workflow,
      contexts,
      attachments: attachments.prompt,
      images: attachments.images,
      input: request.input,
      output: prepared && { schema: prepared.schema, inPrompt: !client.capabilities.nativeStructuredOutput },
    };
    // The thread's newest messages within what the window could take: never the whole thread. A
    // request's own history is kept whole (it is recorded with the run), or the run is refused.
    const earlier = thread ? await store.threads.history(principal.keyId, thread.id, historyBytes(model, config.limits)) : null;
    const history = earlier ? fitHistory(earlier, buildPrompt(parts), model, workflow) : request.history ? wholeHistory(request.history, buildPrompt(parts), model, workflow) : [];
    const prompt = buildPrompt({ ...parts, history });
    // The model's own check: a schema no value satisfies is refused, and engines that count tokens
    // exactly (the local one) refuse a prompt that leaves no room for the output; for the others
    // the prompt is estimated against the configured window, with the output's share kept.
    const measured = await client.preflight?.({
      system: prompt.system,
      messages: prompt.messages,
      maxOutputTokens: workflow.maxOutputTokens,
      json: prepared && { schema: prepared.schema, hash: prepared.hash, name: "output" },
    });
    if (measured && measured.maxOutputTokens <= 0) throw windowExceeded(workflow.model, measured.promptTokens, measured.contextWindow);
    if (!measured) checkWindow(prompt, model, workflow);

    const id = runId ?? newRunId();
    return {
      id,
      operation,
      principal,
      workflow,
      client,
      prepared,
      prompt,
      grounding: operation === "generate.text" ? undefined : planGrounding(request.grounding, schema, request.input, attachments.prompt),
      callback: request.callback,
      thread: request.threadId === undefined ? undefined : { id: request.threadId, isNew: thread === null },
      record: {
        id,
        operation,
        workflowSlug: workflow.slug,
        keyId: principal.keyId,
        input: request.input,
        schema: schema ?? null,
        contextSlugs: contexts.map((c) => c.slug),
        contextChunks: chunkIds,
        workflowVersion: workflow.version,
        workflowLabel: workflow.label ?? null,
        draft: drafted?.record ?? null,
        // The request's own earlier messages, as sent (a thread's are in the thread).
        history: thread ? null : (request.history ?? null),
        contextVersions: Object.fromEntries(resolved.map((c) => [c.slug, c.version])),
        promptHash: promptHash(prompt),
        schemaHash: prepared?.hash,
        promptTokens: measured?.promptTokens,
        outputTokenLimit: measured?.maxOutputTokens,
        attachments: attachments.meta,
        callback: request.callback ?? null,
        modelTag: workflow.model,
        createdAt: "",
      },
    };
  }

  /** The named workflow, or the thread's; the request shape guarantees one of them is given. */
  private async workflow(catalog: Catalog, request: RunRequest, threadWorkflow: string | undefined): Promise<CatalogWorkflow> {
    const slug = request.workflowSlug ?? threadWorkflow;
    if (slug === undefined) {
      throw new GenserveError("thread_not_found", {
        detail: `No thread "${request.threadId}" exists for this key.`,
        errors: [{ path: "/threadId", message: "unknown thread; send workflowSlug too to start it" }],
      });
    }
    return catalog.resolve(slug, request.workflowSlug !== undefined ? "/workflowSlug" : "/threadId");
  }

  /** The workflow's contexts, then the request's (without duplicates); an unknown one is a 404 naming it. */
  private async contexts(catalog: Catalog, workflow: CatalogWorkflow, requested: string[], pinned: Record<string, string> = {}): Promise<CatalogContext[]> {
    const found = new Map<string, CatalogContext>();
    const missing: FieldError[] = [];
    // A replay pins every context to what the original run used; a workflow version pins its own.
    const pins = { ...workflow.contextVersions, ...pinned };
    for (const [i, slug] of requested.entries()) {
      const context = await catalog.context(slug, pins[slug]);
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
      const context = await catalog.context(slug, pins[slug]);
      // A workflow's own context removed since: the run says so rather than running without it.
      if (!context) throw new GenserveError("context_not_found", { detail: `The workflow's context "${slug}" no longer exists.` });
      found.set(slug, context);
    }
    return [...new Set([...workflow.contexts, ...requested])].map((slug) => found.get(slug)!);
  }

}

/** A model alias the configuration does not have, as the problem at `/model` (runs and evaluations may name one). */
export function modelProblem(config: Config, alias: string): FieldError | null {
  if (config.models[alias]) return null;
  return { path: "/model", message: `unknown model "${alias}"; the configuration has ${Object.keys(config.models).join(", ")}` };
}

/** A hash of exactly what the model was sent (images by their sha256), to compare runs later. */
function promptHash(prompt: Prompt): string {
  const messages = prompt.messages.map((m) => ({
    role: m.role,
    content: typeof m.content === "string" ? m.content : m.content.map((p) => (p.type === "text" ? p : { type: "image", sha256: createHash("sha256").update(p.image).digest("hex") })),
  }));
  return sha256(canonicalJson({ system: prompt.system, messages }));
}
