import "server-only";
import type { Config, ContextConfig, WorkflowConfig } from "../config/types";
import { apiContextSchema, workflowSchema } from "../config/schema";
import { GenserveError, validationError, zodFieldErrors } from "../errors";

import type { Store } from "../store/types";

export interface Versioned {
  /** "config" for entries of genserve.yaml (read-only through the API), else the version number. */
  version: string;
  source: "config" | "api";
}
export type CatalogWorkflow = WorkflowConfig & Versioned;
export type CatalogContext = ContextConfig & Versioned;

/**
 * Workflows and contexts: those of the configuration file (the deployment's source of truth,
 * read-only through the API) and those managed through the admin API, where every change is a new
 * immutable version. Runs record the versions they used.
 */
export class Catalog {
  constructor(
    private readonly config: Config,
    private readonly store: Store,
  ) {}

  async workflow(slug: string): Promise<CatalogWorkflow | null> {
    const fromConfig = this.config.workflows[slug];
    if (fromConfig) return { ...fromConfig, version: "config", source: "config" };
    const stored = await this.store.catalog.get("workflow", slug);
    return stored?.body ? { ...storedWorkflow(stored.body), slug, version: String(stored.version), source: "api" } : null;
  }

  async context(slug: string): Promise<CatalogContext | null> {
    const fromConfig = this.config.contexts[slug];
    if (fromConfig) return { ...fromConfig, version: "config", source: "config" };
    const stored = await this.store.catalog.get("context", slug);
    if (!stored?.body) return null;
    const body = stored.body as { title?: string; content: string };
    return { slug, title: body.title ?? slug, content: body.content, version: String(stored.version), source: "api" };
  }

  async workflows(): Promise<CatalogWorkflow[]> {
    const stored = (await this.store.catalog.latest("workflow")).filter((v) => v.body && !this.config.workflows[v.slug]);
    return [
      ...Object.values(this.config.workflows).map((w) => ({ ...w, version: "config", source: "config" as const })),
      ...stored.map((v) => ({ ...storedWorkflow(v.body!), slug: v.slug, version: String(v.version), source: "api" as const })),
    ];
  }

  async contexts(): Promise<CatalogContext[]> {
    const stored = (await this.store.catalog.latest("context")).filter((v) => v.body && !this.config.contexts[v.slug]);
    return [
      ...Object.values(this.config.contexts).map((c) => ({ ...c, version: "config", source: "config" as const })),
      ...stored.map((v) => {
        const body = v.body as { title?: string; content: string };
        return { slug: v.slug, title: body.title ?? v.slug, content: body.content, version: String(v.version), source: "api" as const };
      }),
    ];
  }

  /** Creates or changes an API-managed workflow; returns it and whether it is new. */
  async putWorkflow(slug: string, body: unknown, keyId: string): Promise<{ entry: CatalogWorkflow; created: boolean }> {
    this.refuseConfigEntry("workflow", slug, this.config.workflows[slug] !== undefined);
    const parsed = workflowSchema.safeParse(body, { reportInput: true });
    if (!parsed.success) throw validationError(zodFieldErrors(parsed.error));
    const problems = [];
    if (!this.config.models[parsed.data.model]) problems.push({ path: "/model", message: `unknown model alias "${parsed.data.model}"` });
    for (const [i, context] of parsed.data.contexts.entries()) {
      if (!(await this.context(context))) problems.push({ path: `/contexts/${i}`, message: `unknown context "${context}"` });
    }
    if (problems.length > 0) throw validationError(problems);
    const previous = await this.store.catalog.get("workflow", slug);
    await this.store.catalog.append("workflow", slug, { ...parsed.data, contexts: [...new Set(parsed.data.contexts)] }, keyId, new Date().toISOString());
    return { entry: (await this.workflow(slug))!, created: !previous?.body };
  }

  async putContext(slug: string, body: unknown, keyId: string): Promise<{ entry: CatalogContext; created: boolean }> {
    this.refuseConfigEntry("context", slug, this.config.contexts[slug] !== undefined);
    const parsed = apiContextSchema.safeParse(body, { reportInput: true });
    if (!parsed.success) throw validationError(zodFieldErrors(parsed.error));
    const previous = await this.store.catalog.get("context", slug);
    await this.store.catalog.append("context", slug, parsed.data, keyId, new Date().toISOString());
    return { entry: (await this.context(slug))!, created: !previous?.body };
  }

  async delete(kind: "workflow" | "context", slug: string, keyId: string): Promise<void> {
    const inConfig = kind === "workflow" ? this.config.workflows[slug] !== undefined : this.config.contexts[slug] !== undefined;
    this.refuseConfigEntry(kind, slug, inConfig);
    const current = await this.store.catalog.get(kind, slug);
    if (!current?.body) {
      throw new GenserveError(kind === "workflow" ? "workflow_not_found" : "context_not_found", { detail: `No ${kind} "${slug}" exists.` });
    }
    await this.store.catalog.append(kind, slug, null, keyId, new Date().toISOString());
  }

  private refuseConfigEntry(kind: string, slug: string, inConfig: boolean): void {
    if (inConfig) {
      throw new GenserveError("conflict", { detail: `The ${kind} "${slug}" comes from the configuration file, which stays the source of truth: change it there.` });
    }
  }
}

/** A stored workflow body, read through the schema that validated it when it was written. */
function storedWorkflow(body: Record<string, unknown>): Omit<WorkflowConfig, "slug"> {
  return workflowSchema.parse(body);
}
