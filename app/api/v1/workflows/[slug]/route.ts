import { SLUG } from "@/lib/api/requests";
import { GenserveError, validationError } from "@/lib/errors";
import { requireAdmin } from "@/lib/http/admin";
import { readJsonBody } from "@/lib/http/body";
import { json } from "@/lib/http/problem";
import { route } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** A workflow's whole definition (any key may read it). */
export const GET = route<{ slug: string }>(async ({ runtime, principal, params }) => {
  await principal();
  const workflow = await runtime.catalog.workflow(params.slug);
  if (!workflow) throw new GenserveError("workflow_not_found", { detail: `No workflow "${params.slug}" exists.` });
  return json(workflow);
});

/** Creates or changes an API-managed workflow (admin keys); each change is a new version. */
export const PUT = route<{ slug: string }>(async ({ request, runtime, principal, params }) => {
  const caller = await principal();
  requireAdmin(caller);
  if (!SLUG.test(params.slug)) throw validationError([{ path: "slug", message: "must be 1-128 characters of letters, digits, '.', '_' or '-'" }]);
  const { entry, created } = await runtime.catalog.putWorkflow(params.slug, await readJsonBody(request, runtime.config.limits.bodyBytes), caller.keyId);
  return json(entry, { status: created ? 201 : 200 });
});

export const DELETE = route<{ slug: string }>(async ({ runtime, principal, params }) => {
  const caller = await principal();
  requireAdmin(caller);
  await runtime.catalog.delete("workflow", params.slug, caller.keyId);
  return new Response(null, { status: 204 });
});
