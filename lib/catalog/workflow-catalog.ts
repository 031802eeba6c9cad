import "server-only";
import type { Config, ContextConfig, WorkflowConfig } from "../config/config-types";
import { apiContextSchema, workflowSchema } from "../config/schema";
import { GenserveError, validationError, zodFieldErrors } from "../errors";

import { LABEL, parseWorkflowRef } from "../domain/names";
import { DEFAULT_PROJECT_ID } from "../domain/roles";
import type { CatalogVersion, LabelMove, Store } from "../store/store-types";
import { diffWorkflows, type WorkflowDiff } from "./version-diff";

export interface Versioned {
  /** "config" for entries of genserve.yaml (read-only through the API), else the version number. */
  version: string;
  source: "config" | "api";
}
export type CatalogWorkflow = WorkflowConfig &
  Versioned & {
    /**
     * The versions of its contexts the workflow was saved with (a later change of a context makes a
     * new context version, not a new meaning for this workflow version). Absent for configuration
     * workflows and for versions saved before contexts were pinned: those use the latest.
     */
    contextVersions?: Record<string, string>;
    /** The label the reference resolved through (`slug@staging`, or `production` for a plain slug); null otherwise. */
    label?: string | null;
  };
export type CatalogContext = ContextConfig & Versioned;

/** The label a plain slug resolves through, when it is set. */
export const DEFAULT_LABEL = "production";

/** A workflow reference that names nothing: a 404 saying which part (slug, version, label) is unknown. */
function unknownWorkflow(reason: string, path: string): GenserveError {
  const message = reason.replace(/^No workflow (".*") exists$/, "unknown workflow $1");
  return new GenserveError("workflow_not_found", { detail: `${reason}.`, errors: [{ path, message }] });
}

/**
 * Workflows and contexts: those of the configuration file (the deployment's source of truth,
 * read-only through the API) and those managed through the admin API, where every change is a new
 * immutable version. Runs record the versions they used.
 */
export class Catalog {
  /** The configuration's workflows and contexts: the default project's; other projects have only what they made through the API. */
  private readonly own: Pick<Config, "workflows" | "contexts">;
  private readonly projects = new Map<string, Catalog>();

  constructor(
    private readonly config: Config,
    private readonly store: Store,
    /** The project whose entries and labels this catalog holds (a key's: `forProject(caller.projectId)`). */
    readonly projectId: string = DEFAULT_PROJECT_ID,
  ) {
    this.own = projectId === DEFAULT_PROJECT_ID ? config : { workflows: {}, contexts: {} };
  }

  /** The catalog of one project: workflows, contexts and labels are named per project. */
  forProject(projectId: string): Catalog {
    if (projectId === this.projectId) return this;
    let catalog = this.projects.get(projectId);
    if (!catalog) this.projects.set(projectId, (catalog = new Catalog(this.config, this.store, projectId)));
    return catalog;
  }

  /** A workflow's current definition by its slug (no labels followed): the configuration's, else the latest API version. */
  async workflow(slug: string): Promise<CatalogWorkflow | null> {
    const fromConfig = this.own.workflows[slug];
    if (fromConfig) return { ...fromConfig, version: "config", source: "config" };
    const stored = await this.store.catalog.get("workflow", slug, this.projectId);
    return stored?.body ? apiWorkflow(stored) : null;
  }

  /**
   * A workflow as callers name it: `slug` (its `production` label when set, else the current
   * definition), `slug@4` or `slug@config` (that version), `slug@staging` (where the label points).
   * An unknown slug, version or label is a 404 naming which, at `path`.
   */
  async resolve(ref: string, path = "/workflowSlug"): Promise<CatalogWorkflow> {
    const { slug, selector } = parseWorkflowRef(ref);
    if (selector.kind === "default") {
      // A configuration workflow has one version, which any label on it names: no lookup on this
      // hot path (and no label recorded). An API workflow: its newest version and its production
      // label in one statement; a second only when the label points at an older version.
      const fromConfig = this.own.workflows[slug];
      if (fromConfig) return { ...fromConfig, version: "config", source: "config", label: null };
      const found = await this.store.catalog.latestWithLabel(slug, DEFAULT_LABEL, this.projectId);
      if (!found?.latest.body) throw unknownWorkflow(`No workflow "${slug}" exists`, path);
      const { latest, labelled } = found;
      if (labelled === null || labelled === String(latest.version)) return { ...apiWorkflow(latest), label: labelled === null ? null : DEFAULT_LABEL };
      return { ...(await this.version(slug, labelled, path)), label: DEFAULT_LABEL };
    }
    if (selector.kind === "version") return { ...(await this.version(slug, selector.version, path)), label: null };
    const label = await this.store.labels.get(slug, selector.label, this.projectId);
    if (!label) {
      // A deleted workflow's labels still resolve (old runs replay); only a slug never saved is unknown.
      if (!this.own.workflows[slug] && !(await this.store.catalog.get("workflow", slug, this.projectId))) throw unknownWorkflow(`No workflow "${slug}" exists`, path);
      throw unknownWorkflow(`Workflow "${slug}" has no label "${selector.label}"`, path);
    }
    return { ...(await this.version(slug, label.version!, path)), label: selector.label };
  }

  /** One version of a workflow: "config" for the configuration's, else an API version (deleted ones too, so old runs replay). */
  async version(slug: string, version: string, path = "/workflowSlug"): Promise<CatalogWorkflow> {
    const fromConfig = this.own.workflows[slug];
    if (version === "config") {
      if (fromConfig) return { ...fromConfig, version: "config", source: "config" };
      throw unknownWorkflow(`Workflow "${slug}" has no version "config" (it is not in the configuration file)`, path);
    }
    const stored = fromConfig ? null : await this.store.catalog.version("workflow", slug, Number(version), this.projectId);
    if (stored?.body) return apiWorkflow(stored);
    if (fromConfig) throw unknownWorkflow(`Workflow "${slug}" comes from the configuration file; its only version is "config"`, path);
    const any = await this.store.catalog.get("workflow", slug, this.projectId);
    throw unknownWorkflow(any ? `Workflow "${slug}" has no version ${version}` : `No workflow "${slug}" exists`, path);
  }

  /** Every version of a workflow, oldest first: "config" alone for the configuration's. */
  async workflowVersions(slug: string): Promise<{ version: string; createdAt: string | null; keyId: string | null; deleted: boolean; workflow: CatalogWorkflow | null }[] | null> {
    const fromConfig = this.own.workflows[slug];
    if (fromConfig) return [{ version: "config", createdAt: null, keyId: null, deleted: false, workflow: { ...fromConfig, version: "config", source: "config" } }];
    const versions = await this.store.catalog.versions("workflow", slug, this.projectId);
    if (versions.length === 0) return null;
    return versions.map((v) => ({ version: String(v.version), createdAt: v.createdAt, keyId: v.keyId, deleted: v.body === null, workflow: v.body ? apiWorkflow(v) : null }));
  }

  /** A context: the current one, or with `version` the one a workflow pinned ("config" or an API version). */
  async context(slug: string, version?: string): Promise<CatalogContext | null> {
    const fromConfig = this.own.contexts[slug];
    if (fromConfig && (version === undefined || version === "config")) return { ...fromConfig, version: "config", source: "config" };
    const stored = version === undefined || version === "config" ? await this.store.catalog.get("context", slug, this.projectId) : await this.store.catalog.version("context", slug, Number(version), this.projectId);
    if (!stored?.body) return null;
    const body = stored.body as { title?: string; content: string };
    return { slug, title: body.title ?? slug, content: body.content, version: String(stored.version), source: "api" };
  }

  /** The workflow's labels as they point now. */
  labels(slug: string): Promise<LabelMove[]> {
    return this.store.labels.current(slug, this.projectId);
  }

  /**
   * Points a label at a version (checked to exist), or records a promotion its suite refused; the
   * move is recorded with who made it and, for a gated promotion, the evaluation (at most once).
   */
  async moveLabel(
    slug: string,
    label: string,
    version: string,
    keyId: string,
    gate?: { evaluationId: string; passRate: number; passed: boolean },
  ): Promise<LabelMove | null> {
    if (!LABEL.test(label)) throw validationError([{ path: "label", message: "must be 1-64 letters, digits, '.', '_' or '-', and not a number or \"config\"" }]);
    await this.version(slug, version, "/version");
    return this.store.labels.record({
      slug,
      label,
      outcome: gate && !gate.passed ? "refused" : "moved",
      version,
      keyId,
      evaluationId: gate?.evaluationId ?? null,
      passRate: gate?.passRate ?? null,
      createdAt: new Date().toISOString(),
    }, this.projectId);
  }

  async removeLabel(slug: string, label: string, keyId: string): Promise<LabelMove> {
    if (!(await this.store.labels.get(slug, label, this.projectId))) throw unknownWorkflow(`Workflow "${slug}" has no label "${label}"`, "label");
    return (await this.store.labels.record({ slug, label, outcome: "removed", version: null, keyId, evaluationId: null, passRate: null, createdAt: new Date().toISOString() }, this.projectId))!;
  }

  /** What changed from one version (or label) of a workflow to another; `from`/`to` errors name those parameters. */
  async diff(slug: string, from: string, to: string): Promise<WorkflowDiff & { before: CatalogWorkflow; after: CatalogWorkflow }> {
    const [before, after] = await Promise.all([this.resolve(`${slug}@${from}`, "from"), this.resolve(`${slug}@${to}`, "to")]);
    return { ...diffWorkflows(before, after), before, after };
  }

  labelHistory(slug: string): Promise<LabelMove[]> {
    return this.store.labels.history(slug, this.projectId);
  }

  async workflows(): Promise<CatalogWorkflow[]> {
    const stored = (await this.store.catalog.latest("workflow", this.projectId)).filter((v) => v.body && !this.own.workflows[v.slug]);
    return [
      ...Object.values(this.own.workflows).map((w) => ({ ...w, version: "config", source: "config" as const })),
      ...stored.map(apiWorkflow),
    ];
  }

  async contexts(): Promise<CatalogContext[]> {
    const stored = (await this.store.catalog.latest("context", this.projectId)).filter((v) => v.body && !this.own.contexts[v.slug]);
    return [
      ...Object.values(this.own.contexts).map((c) => ({ ...c, version: "config", source: "config" as const })),
      ...stored.map((v) => {
        const body = v.body as { title?: string; content: string };
        return { slug: v.slug, title: body.title ?? v.slug, content: body.content, version: String(v.version), source: "api" as const };
      }),
    ];
  }

  /** Creates or changes an API-managed workflow; returns it and whether it is new. */
  async putWorkflow(slug: string, body: unknown, keyId: string): Promise<{ entry: CatalogWorkflow; created: boolean }> {
    this.refuseConfigEntry("workflow", slug, this.own.workflows[slug] !== undefined);
    const parsed = workflowSchema.safeParse(body, { reportInput: true });
    if (!parsed.success) throw validationError(zodFieldErrors(parsed.error));
    const problems = [];
    if (!this.config.models[parsed.data.model]) problems.push({ path: "/model", message: `unknown model alias "${parsed.data.model}"` });
    // The version is a bundle: each context pinned to the version it has now.
    const contexts = [...new Set(parsed.data.contexts)];
    const contextVersions: Record<string, string> = {};
    for (const [i, context] of parsed.data.contexts.entries()) {
      const found = await this.context(context);
      if (found) contextVersions[context] = found.version;
      else problems.push({ path: `/contexts/${i}`, message: `unknown context "${context}"` });
    }
    if (problems.length > 0) throw validationError(problems);
    const previous = await this.store.catalog.get("workflow", slug, this.projectId);
    await this.store.catalog.append("workflow", slug, { ...parsed.data, contexts, contextVersions }, keyId, new Date().toISOString(), this.projectId);
    return { entry: (await this.workflow(slug))!, created: !previous?.body };
  }

  async putContext(slug: string, body: unknown, keyId: string): Promise<{ entry: CatalogContext; created: boolean }> {
    this.refuseConfigEntry("context", slug, this.own.contexts[slug] !== undefined);
    const parsed = apiContextSchema.safeParse(body, { reportInput: true });
    if (!parsed.success) throw validationError(zodFieldErrors(parsed.error));
    const previous = await this.store.catalog.get("context", slug, this.projectId);
    await this.store.catalog.append("context", slug, parsed.data, keyId, new Date().toISOString(), this.projectId);
    return { entry: (await this.context(slug))!, created: !previous?.body };
  }

  async delete(kind: "workflow" | "context", slug: string, keyId: string): Promise<void> {
    const inConfig = kind === "workflow" ? this.own.workflows[slug] !== undefined : this.own.contexts[slug] !== undefined;
    this.refuseConfigEntry(kind, slug, inConfig);
    const current = await this.store.catalog.get(kind, slug, this.projectId);
    if (!current?.body) {
      throw new GenserveError(kind === "workflow" ? "workflow_not_found" : "context_not_found", { detail: `No ${kind} "${slug}" exists.` });
    }
    await this.store.catalog.append(kind, slug, null, keyId, new Date().toISOString(), this.projectId);
  }

  private refuseConfigEntry(kind: string, slug: string, inConfig: boolean): void {
    if (inConfig) {
      throw new GenserveError("conflict", { detail: `The ${kind} "${slug}" comes from the configuration file, which stays the source of truth: change it there.` });
    }
  }
}

/** A stored workflow version, its body read through the schema that validated it when it was written. */
function apiWorkflow(stored: CatalogVersion): CatalogWorkflow {
  const { contextVersions, ...body } = stored.body as Record<string, unknown> & { contextVersions?: Record<string, string> };
  return { ...workflowSchema.parse(body), slug: stored.slug, version: String(stored.version), source: "api", ...(contextVersions && { contextVersions }) };
}
