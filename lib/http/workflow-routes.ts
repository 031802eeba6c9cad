import "server-only";
import { diffQuery, labelMoveSchema, labelName, labelsSchema, moveLabelRequest, promoteRequest, promotionStartedSchema, workflowDiffSchema, workflowVersionsSchema } from "../api/lifecycle";
import { SLUG } from "../domain/names";
import { GenserveError, validationError, zodFieldErrors } from "../errors";
import type { Principal } from "../keys/keys";
import type { LabelMove } from "../store/types";
import { reply } from "./problem";
import { route } from "./route";

function requireAdmin(principal: Principal): void {
  if (!principal.admin) throw new GenserveError("forbidden", { detail: "Only admin keys may move workflow labels." });
}

function checkNames(params: { slug: string; label?: string }): string | undefined {
  const problems = [];
  if (!SLUG.test(params.slug)) problems.push({ path: "slug", message: "must be a workflow slug" });
  if (params.label !== undefined && !labelName.safeParse(params.label).success) problems.push({ path: "label", message: "must be 1-64 letters, digits, '.', '_' or '-', and not a number or \"config\"" });
  if (problems.length > 0) throw validationError(problems);
  return params.label;
}

const moveView = (m: LabelMove) => ({ label: m.label, outcome: m.outcome, version: m.version, previous: m.previous, keyId: m.keyId, evaluationId: m.evaluationId, passRate: m.passRate, createdAt: m.createdAt });

/** GET /api/v1/workflows/{slug}/versions: every version, oldest first, with the labels pointing at each. */
export const listVersions = route<{ slug: string }>(async ({ runtime, principal, params }) => {
  await principal();
  checkNames(params);
  const versions = await runtime.catalog.workflowVersions(params.slug);
  if (!versions) throw new GenserveError("workflow_not_found", { detail: `No workflow "${params.slug}" exists.` });
  const labels = await runtime.catalog.labels(params.slug);
  return reply(workflowVersionsSchema, {
    slug: params.slug,
    source: versions[0]!.version === "config" ? "config" : "api",
    versions: versions.map((v) => ({
      version: v.version,
      createdAt: v.createdAt,
      keyId: v.keyId,
      deleted: v.deleted,
      labels: labels.filter((l) => l.version === v.version).map((l) => l.label),
      model: v.workflow?.model ?? null,
      description: v.workflow?.description ?? null,
      note: v.workflow?.note ?? null,
      hasSchema: v.workflow?.schema !== undefined,
    })),
  });
});

/** GET /api/v1/workflows/{slug}/labels: where each label points, and every move (newest first). */
export const listLabels = route<{ slug: string }>(async ({ runtime, principal, params }) => {
  await principal();
  checkNames(params);
  if (!(await runtime.catalog.workflow(params.slug))) throw new GenserveError("workflow_not_found", { detail: `No workflow "${params.slug}" exists.` });
  const [labels, history] = await Promise.all([runtime.catalog.labels(params.slug), runtime.catalog.labelHistory(params.slug)]);
  return reply(labelsSchema, {
    slug: params.slug,
    labels: labels.map((l) => ({ label: l.label, version: l.version!, movedAt: l.createdAt, keyId: l.keyId, evaluationId: l.evaluationId })),
    history: history.map(moveView),
  });
});

/** PUT …/labels/{label} `{version}`: moves the label at once (admin keys). Rollback is moving it back. */
export const putLabel = route<{ slug: string; label: string }>(async ({ runtime, principal, params, body }) => {
  const caller = await principal();
  requireAdmin(caller);
  const label = checkNames(params)!;
  const { version } = await body(moveLabelRequest);
  const move = await runtime.catalog.moveLabel(params.slug, label, version, caller.keyId);
  return reply(labelMoveSchema, moveView(move!));
});

/**
 * POST …/labels/{label} `{version, requireSuite?, minPass?}`: a promotion. Without a suite it moves
 * the label at once; with one it starts that suite's evaluation against the version and answers 202:
 * the label moves when the evaluation ends with the pass rate reached, and the history records the
 * evaluation either way.
 */
export const promoteLabel = route<{ slug: string; label: string }>(async ({ runtime, principal, params, body }) => {
  const caller = await principal();
  requireAdmin(caller);
  const label = checkNames(params)!;
  const { version, requireSuite, minPass } = await body(promoteRequest);
  if (requireSuite === undefined) {
    if (minPass !== undefined) throw validationError([{ path: "/minPass", message: "needs requireSuite" }]);
    const move = await runtime.catalog.moveLabel(params.slug, label, version, caller.keyId);
    return reply(labelMoveSchema, moveView(move!));
  }
  const evaluation = await runtime.evaluations.promote(caller, { slug: params.slug, label, version, minPass: minPass ?? 1, suite: requireSuite });
  return reply(
    promotionStartedSchema,
    { status: "pending", evaluationId: evaluation.id, label, version, minPass: minPass ?? 1 },
    { status: 202, headers: { Location: `/api/v1/evaluations/${evaluation.id}` } },
  );
});

/** DELETE …/labels/{label}: removes the label (a plain slug then resolves to the latest version if it was `production`). */
export const deleteLabel = route<{ slug: string; label: string }>(async ({ runtime, principal, params }) => {
  const caller = await principal();
  requireAdmin(caller);
  const label = checkNames(params)!;
  await runtime.catalog.removeLabel(params.slug, label, caller.keyId);
  return new Response(null, { status: 204 });
});

/** GET /api/v1/workflows/{slug}/diff?from=3&to=5: instructions, parameters, contexts and the default schema, classified. */
export const diffVersions = route<{ slug: string }>(async ({ request, runtime, principal, params }) => {
  await principal();
  checkNames(params);
  const query = diffQuery.safeParse(Object.fromEntries(new URL(request.url).searchParams), { reportInput: true });
  if (!query.success) throw validationError(zodFieldErrors(query.error).map((e) => ({ ...e, path: e.path.replace(/^\//, "") })));
  const { before, after, ...diff } = await runtime.catalog.diff(params.slug, query.data.from, query.data.to);
  return reply(workflowDiffSchema, {
    ...diff,
    before: { instructions: before.instructions, schema: before.schema ?? null },
    after: { instructions: after.instructions, schema: after.schema ?? null },
  });
});
