import "server-only";
import { contextDefinition, contextListSchema, workflowDefinition, workflowListSchema } from "../../api/responses";
import { SLUG } from "../../domain/names";
import { GenserveError, validationError } from "../../errors";
import { changesBetween } from "../../audit/audit-log";
import { audit } from "../audit-origin";
import { readJsonBody } from "../body";
import { EDITOR, endpoint, VIEWER, type Endpoint } from "../endpoint";
import { reply } from "../problem";
import type { RouteContext } from "../route";

/** Managing workflows and contexts is for editor and admin keys. */
const EDIT = EDITOR("Only editor and admin keys may change workflows and contexts.");

const WORKFLOW_BODY = {
  type: "object",
  description:
    "The workflow fields of genserve.yaml: model, description, instructions, temperature, maxOutputTokens, retries, timeoutMs, contexts, example, schema (the default schema of object runs). Contexts are pinned to their current versions.",
};
const CONTEXT_BODY = { type: "object", properties: { title: { type: "string" }, content: { type: "string" } }, required: ["content"] };

/** GET of one workflow or context (any key). */
async function getEntry(kind: "workflow" | "context", { runtime, params, principal }: RouteContext<{ slug: string }>): Promise<Response> {
  const catalog = runtime.catalog.forProject((await principal()).projectId);
  // A workflow is read by any reference: `slug`, `slug@4`, `slug@staging`.
  if (kind === "workflow") return reply(workflowDefinition, await catalog.resolve(params.slug, "slug"));
  const entry = await catalog.context(params.slug);
  if (!entry) throw new GenserveError("context_not_found", { detail: `No context "${params.slug}" exists.` });
  return reply(contextDefinition, entry);
}

/** Creates or changes an API-managed workflow or context; every change is a new version. */
async function putEntry(kind: "workflow" | "context", ctx: RouteContext<{ slug: string }>): Promise<Response> {
  const { request, runtime, principal, params } = ctx;
  const caller = await principal();
  if (!SLUG.test(params.slug)) throw validationError([{ path: "slug", message: "must be 1-128 characters of letters, digits, '.', '_' or '-'" }]);
  const body = await readJsonBody(request, runtime.config.limits.bodyBytes, runtime.config.limits.jsonDepth);
  if (kind === "workflow") {
    // A default schema is screened as a run's would be, its problems at /schema/….
    const schema = (body as { schema?: unknown } | null)?.schema;
    if (schema !== null && typeof schema === "object" && !Array.isArray(schema)) {
      const check = await runtime.runs.checkSchema(caller, { schema: schema as Record<string, unknown> });
      if (!check.accepted) throw validationError(check.problems);
    }
    const catalog = runtime.catalog.forProject(caller.projectId);
    const before = await catalog.workflow(params.slug);
    const { entry, created } = await catalog.putWorkflow(params.slug, body, caller.keyId);
    await audit(ctx, "workflow.version.create", { kind: "workflow", id: params.slug }, definitionChanges(before, entry));
    return reply(workflowDefinition, entry, { status: created ? 201 : 200 });
  }
  const catalog = runtime.catalog.forProject(caller.projectId);
  const before = await catalog.context(params.slug);
  const { entry, created } = await catalog.putContext(params.slug, body, caller.keyId);
  await audit(ctx, "context.version.create", { kind: "context", id: params.slug }, definitionChanges(before, entry));
  return reply(contextDefinition, entry, { status: created ? 201 : 200 });
}

/** What a new version changed: its fields that differ from the version before (where it came from is not a change). */
function definitionChanges(before: object | null, after: object) {
  const { source: _was, ...was } = (before ?? {}) as Record<string, unknown>;
  const { source: _is, ...is } = after as Record<string, unknown>;
  return changesBetween(before ? was : null, is);
}

async function deleteEntry(kind: "workflow" | "context", ctx: RouteContext<{ slug: string }>): Promise<Response> {
  const { runtime, principal, params } = ctx;
  const caller = await principal();
  const catalog = runtime.catalog.forProject(caller.projectId);
  const before = kind === "workflow" ? await catalog.workflow(params.slug) : await catalog.context(params.slug);
  await catalog.delete(kind, params.slug, caller.keyId);
  await audit(ctx, `${kind}.delete`, { kind, id: params.slug }, changesBetween({ version: before?.version ?? null }, { version: null }));
  return new Response(null, { status: 204 });
}

const workflows: Endpoint[] = [
  endpoint({
    method: "GET",
    path: "/api/v1/workflows",
    operationId: "listWorkflows",
    summary: "Configured workflows",
    auth: VIEWER,
    responses: { "200": { description: "Workflows.", body: workflowListSchema } },
    errors: ["unauthorized"],
    handler: async ({ runtime, principal }) => {
      const workflows = (await runtime.catalog.forProject((await principal()).projectId).workflows()).map((w) => ({
        slug: w.slug,
        description: w.description,
        model: w.model,
        contexts: w.contexts,
        // Lets clients estimate a run's prompt size before spending it.
        instructionsChars: w.instructions.length,
        ...(w.example && { example: w.example }),
        version: w.version,
        source: w.source,
      }));
      return reply(workflowListSchema, { workflows });
    },
  }),
  endpoint({
    method: "GET",
    path: "/api/v1/workflows/{slug}",
    operationId: "getWorkflow",
    summary: "A workflow's definition: `slug` (its production label, else the latest), `slug@4`, `slug@config` or `slug@label`",
    auth: VIEWER,
    responses: { "200": { description: "The workflow, with its version and source.", body: workflowDefinition } },
    errors: ["unauthorized", "workflow_not_found"],
    handler: (ctx) => getEntry("workflow", ctx),
  }),
  endpoint({
    method: "PUT",
    path: "/api/v1/workflows/{slug}",
    operationId: "putWorkflow",
    summary: "Create or change an API-managed workflow (editor keys); each change is a new version",
    auth: EDIT,
    request: { body: WORKFLOW_BODY, required: true },
    responses: { "200": { description: "Changed.", body: workflowDefinition }, "201": { description: "Created.", body: workflowDefinition } },
    errors: ["validation_failed", "unauthorized", "forbidden", "conflict"],
    handler: (ctx) => putEntry("workflow", ctx),
  }),
  endpoint({
    method: "DELETE",
    path: "/api/v1/workflows/{slug}",
    operationId: "deleteWorkflow",
    summary: "Delete an API-managed workflow (editor keys)",
    auth: EDIT,
    responses: { "204": { description: "Deleted." } },
    errors: ["unauthorized", "forbidden", "workflow_not_found", "conflict"],
    handler: (ctx) => deleteEntry("workflow", ctx),
  }),
];

const contexts: Endpoint[] = [
  endpoint({
    method: "GET",
    path: "/api/v1/contexts",
    operationId: "listContexts",
    summary: "Configured contexts",
    auth: VIEWER,
    responses: { "200": { description: "Contexts.", body: contextListSchema } },
    errors: ["unauthorized"],
    handler: async ({ runtime, principal }) => {
      const contexts = (await runtime.catalog.forProject((await principal()).projectId).contexts()).map((c) => ({ slug: c.slug, title: c.title, size: c.content.length, version: c.version, source: c.source }));
      return reply(contextListSchema, { contexts });
    },
  }),
  endpoint({
    method: "GET",
    path: "/api/v1/contexts/{slug}",
    operationId: "getContext",
    summary: "A context with its content",
    auth: VIEWER,
    responses: { "200": { description: "The context.", body: contextDefinition } },
    errors: ["unauthorized", "context_not_found"],
    handler: (ctx) => getEntry("context", ctx),
  }),
  endpoint({
    method: "PUT",
    path: "/api/v1/contexts/{slug}",
    operationId: "putContext",
    summary: "Create or change an API-managed context `{title?, content}` (editor keys); each change is a new version",
    auth: EDIT,
    request: { body: CONTEXT_BODY, required: true },
    responses: { "200": { description: "Changed.", body: contextDefinition }, "201": { description: "Created.", body: contextDefinition } },
    errors: ["validation_failed", "unauthorized", "forbidden", "conflict"],
    handler: (ctx) => putEntry("context", ctx),
  }),
  endpoint({
    method: "DELETE",
    path: "/api/v1/contexts/{slug}",
    operationId: "deleteContext",
    summary: "Delete an API-managed context (editor keys)",
    auth: EDIT,
    responses: { "204": { description: "Deleted." } },
    errors: ["unauthorized", "forbidden", "context_not_found", "conflict"],
    handler: (ctx) => deleteEntry("context", ctx),
  }),
];

export const endpoints = [...workflows, ...contexts];
