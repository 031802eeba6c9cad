import "server-only";
import { SLUG } from "../domain/names";
import { GenserveError, validationError } from "../errors";
import type { Principal } from "../keys/keys";
import { readJsonBody } from "./body";
import { contextDefinition, workflowDefinition } from "../api/responses";
import { reply } from "./problem";
import { route } from "./route";

/** Managing workflows and contexts is for admin keys. */
function requireAdmin(principal: Principal): void {
  if (!principal.admin) throw new GenserveError("forbidden", { detail: "Only admin keys may change workflows and contexts." });
}

/**
 * GET (any key), PUT and DELETE (admin keys) for one workflow or context: the same rules for both
 * kinds, so they live in one place.
 */
export function catalogEntryRoutes(kind: "workflow" | "context") {
  const notFound = (slug: string) => new GenserveError(kind === "workflow" ? "workflow_not_found" : "context_not_found", { detail: `No ${kind} "${slug}" exists.` });

  const GET = route<{ slug: string }>(async ({ runtime, principal, params }) => {
    await principal();
    // A workflow is read by any reference: `slug`, `slug@4`, `slug@staging`.
    if (kind === "workflow") return reply(workflowDefinition, await runtime.catalog.resolve(params.slug, "slug"));
    const entry = await runtime.catalog.context(params.slug);
    if (!entry) throw notFound(params.slug);
    return reply(contextDefinition, entry);
  });

  /** Creates or changes an API-managed entry; every change is a new version. */
  const PUT = route<{ slug: string }>(async ({ request, runtime, principal, params }) => {
    const caller = await principal();
    requireAdmin(caller);
    if (!SLUG.test(params.slug)) throw validationError([{ path: "slug", message: "must be 1-128 characters of letters, digits, '.', '_' or '-'" }]);
    const body = await readJsonBody(request, runtime.config.limits.bodyBytes, runtime.config.limits.jsonDepth);
    if (kind === "workflow") {
      // A default schema is screened as a run's would be, its problems at /schema/….
      const schema = (body as { schema?: unknown } | null)?.schema;
      if (schema !== null && typeof schema === "object" && !Array.isArray(schema)) {
        const check = await runtime.runs.checkSchema(caller, { schema: schema as Record<string, unknown> });
        if (!check.accepted) throw validationError(check.problems);
      }
      const { entry, created } = await runtime.catalog.putWorkflow(params.slug, body, caller.keyId);
      return reply(workflowDefinition, entry, { status: created ? 201 : 200 });
    }
    const { entry, created } = await runtime.catalog.putContext(params.slug, body, caller.keyId);
    return reply(contextDefinition, entry, { status: created ? 201 : 200 });
  });

  const DELETE = route<{ slug: string }>(async ({ runtime, principal, params }) => {
    const caller = await principal();
    requireAdmin(caller);
    await runtime.catalog.delete(kind, params.slug, caller.keyId);
    return new Response(null, { status: 204 });
  });

  return { GET, PUT, DELETE };
}
