import "server-only";
import { diffQuery, labelMoveSchema, labelName, labelsSchema, moveLabelRequest, promoteRequest, promotionStartedSchema, workflowDiffSchema, workflowVersionsSchema } from "../../api/lifecycle-shapes";
import { SLUG } from "../../domain/names";
import { PROTECTED_LABEL } from "../../domain/roles";
import type { Principal } from "../../keys/api-keys";
import { GenserveError, validationError, zodFieldErrors } from "../../errors";
import type { LabelMove } from "../../store/store-types";
import { changesBetween } from "../../audit/audit-log";
import { audit } from "../audit-origin";
import { EVALUATION_LOCATION } from "../doc-parts";
import { EDITOR, endpoint, VIEWER } from "../endpoint";
import { reply } from "../problem";
import type { RouteContext } from "../route";

const LABELS = EDITOR("Only editor and admin keys may move workflow labels (and only admin keys the production label).");

function checkNames(params: { slug: string; label?: string }): string | undefined {
  const problems = [];
  if (!SLUG.test(params.slug)) problems.push({ path: "slug", message: "must be a workflow slug" });
  if (params.label !== undefined && !labelName.safeParse(params.label).success) problems.push({ path: "label", message: "must be 1-64 letters, digits, '.', '_' or '-', and not a number or \"config\"" });
  if (problems.length > 0) throw validationError(problems);
  return params.label;
}

/** The `production` label is what programs run by default: only admins move it (the route lets editors move the others). */
function assertMayMove(caller: Principal, label: string): void {
  if (label !== PROTECTED_LABEL || caller.role === "admin") return;
  throw new GenserveError("forbidden", {
    detail: `Only admin keys may move the "${PROTECTED_LABEL}" label (this key is a ${caller.role}); editors move the other labels.`,
    errors: [{ path: "label", message: `"${PROTECTED_LABEL}" needs an admin key` }],
  });
}

const moveView = (m: LabelMove) => ({ label: m.label, outcome: m.outcome, version: m.version, previous: m.previous, keyId: m.keyId, evaluationId: m.evaluationId, passRate: m.passRate, createdAt: m.createdAt });

/** GET /api/v1/workflows/{slug}/versions: every version, oldest first, with the labels pointing at each. */
const listVersions = async ({ runtime, principal, params }: RouteContext<{ slug: string }>): Promise<Response> => {
  const catalog = runtime.catalog.forProject((await principal()).projectId);
  checkNames(params);
  const versions = await catalog.workflowVersions(params.slug);
  if (!versions) throw new GenserveError("workflow_not_found", { detail: `No workflow "${params.slug}" exists.` });
  const labels = await catalog.labels(params.slug);
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
};

/** GET /api/v1/workflows/{slug}/labels: where each label points, and every move (newest first). */
const listLabels = async ({ runtime, principal, params }: RouteContext<{ slug: string }>): Promise<Response> => {
  const catalog = runtime.catalog.forProject((await principal()).projectId);
  checkNames(params);
  if (!(await catalog.workflow(params.slug))) throw new GenserveError("workflow_not_found", { detail: `No workflow "${params.slug}" exists.` });
  const [labels, history] = await Promise.all([catalog.labels(params.slug), catalog.labelHistory(params.slug)]);
  return reply(labelsSchema, {
    slug: params.slug,
    labels: labels.map((l) => ({ label: l.label, version: l.version!, movedAt: l.createdAt, keyId: l.keyId, evaluationId: l.evaluationId })),
    history: history.map(moveView),
  });
};

/** PUT …/labels/{label} `{version}`: moves the label at once (editor keys; production: admin keys). Rollback is moving it back. */
const putLabel = async (ctx: RouteContext<{ slug: string; label: string }>): Promise<Response> => {
  const { runtime, principal, params, body } = ctx;
  const caller = await principal();
  const label = checkNames(params)!;
  assertMayMove(caller, label);
  const { version } = await body(moveLabelRequest);
  const move = await runtime.catalog.forProject(caller.projectId).moveLabel(params.slug, label, version, caller.keyId);
  await auditMove(ctx, "workflow.label.move", move!);
  return reply(labelMoveSchema, moveView(move!));
};

/**
 * POST …/labels/{label} `{version, requireSuite?, minPass?}`: a promotion. Without a suite it moves
 * the label at once; with one it starts that suite's evaluation against the version and answers 202:
 * the label moves when the evaluation ends with the pass rate reached, and the history records the
 * evaluation either way.
 */
const promoteLabel = async (ctx: RouteContext<{ slug: string; label: string }>): Promise<Response> => {
  const { runtime, principal, params, body } = ctx;
  const caller = await principal();
  const label = checkNames(params)!;
  assertMayMove(caller, label);
  const { version, requireSuite, minPass } = await body(promoteRequest);
  if (requireSuite === undefined) {
    if (minPass !== undefined) throw validationError([{ path: "/minPass", message: "needs requireSuite" }]);
    const move = await runtime.catalog.forProject(caller.projectId).moveLabel(params.slug, label, version, caller.keyId);
    await auditMove(ctx, "workflow.label.move", move!);
    return reply(labelMoveSchema, moveView(move!));
  }
  const evaluation = await runtime.evaluations.promote(caller, { slug: params.slug, label, version, minPass: minPass ?? 1, suite: requireSuite });
  // The move itself is decided by the evaluation (the label's history records it); this records who asked.
  await audit(ctx, "workflow.label.promote", { kind: "workflow", id: params.slug }, {
    [`labels.${label}`]: { after: version },
    gate: { after: { suite: requireSuite, minPass: minPass ?? 1, evaluationId: evaluation.id } },
  });
  return reply(
    promotionStartedSchema,
    { status: "pending", evaluationId: evaluation.id, label, version, minPass: minPass ?? 1 },
    { status: 202, headers: { Location: `/api/v1/evaluations/${evaluation.id}` } },
  );
};

/** DELETE …/labels/{label}: removes the label (a plain slug then resolves to the latest version if it was `production`). */
const deleteLabel = async (ctx: RouteContext<{ slug: string; label: string }>): Promise<Response> => {
  const { runtime, principal, params } = ctx;
  const caller = await principal();
  const label = checkNames(params)!;
  assertMayMove(caller, label);
  const move = await runtime.catalog.forProject(caller.projectId).removeLabel(params.slug, label, caller.keyId);
  await auditMove(ctx, "workflow.label.remove", move);
  return new Response(null, { status: 204 });
};

/** A label's move in the audit log: the workflow as the subject, `labels.<name>` the version it pointed at before and after. */
const auditMove = (ctx: RouteContext<{ slug: string; label: string }>, action: string, move: LabelMove) =>
  audit(ctx, action, { kind: "workflow", id: move.slug }, changesBetween({ [`labels.${move.label}`]: move.previous }, { [`labels.${move.label}`]: move.version }));

/** GET /api/v1/workflows/{slug}/diff?from=3&to=5: instructions, parameters, contexts and the default schema, classified. */
const diffVersions = async ({ request, runtime, principal, params }: RouteContext<{ slug: string }>): Promise<Response> => {
  const caller = await principal();
  checkNames(params);
  const query = diffQuery.safeParse(Object.fromEntries(new URL(request.url).searchParams), { reportInput: true });
  if (!query.success) throw validationError(zodFieldErrors(query.error).map((e) => ({ ...e, path: e.path.replace(/^\//, "") })));
  const { before, after, ...diff } = await runtime.catalog.forProject(caller.projectId).diff(params.slug, query.data.from, query.data.to);
  return reply(workflowDiffSchema, {
    ...diff,
    before: { instructions: before.instructions, schema: before.schema ?? null },
    after: { instructions: after.instructions, schema: after.schema ?? null },
  });
};

export const endpoints = [
  endpoint({
    method: "GET",
    path: "/api/v1/workflows/{slug}/versions",
    operationId: "listWorkflowVersions",
    summary: "Every version of a workflow, oldest first, with the labels pointing at each",
    auth: VIEWER,
    responses: { "200": { description: "The versions.", body: workflowVersionsSchema } },
    errors: ["validation_failed", "unauthorized", "workflow_not_found"],
    handler: listVersions,
  }),
  endpoint({
    method: "GET",
    path: "/api/v1/workflows/{slug}/labels",
    operationId: "listWorkflowLabels",
    summary: "Where each label points, and every move (who, when, from which version, the evaluation that gated it)",
    auth: VIEWER,
    responses: { "200": { description: "The labels.", body: labelsSchema } },
    errors: ["validation_failed", "unauthorized", "workflow_not_found"],
    handler: listLabels,
  }),
  endpoint({
    method: "PUT",
    path: "/api/v1/workflows/{slug}/labels/{label}",
    operationId: "moveWorkflowLabel",
    summary: "Point a label at a version now (editor keys; the production label admin keys); rollback is moving it back",
    auth: LABELS,
    request: { body: moveLabelRequest, required: true },
    responses: { "200": { description: "Moved.", body: labelMoveSchema } },
    errors: ["validation_failed", "unauthorized", "forbidden", "workflow_not_found", "unsupported_media_type"],
    handler: putLabel,
  }),
  endpoint({
    method: "POST",
    path: "/api/v1/workflows/{slug}/labels/{label}",
    operationId: "promoteWorkflow",
    summary: "Promote a version to a label, gated by a test suite (editor keys; the production label admin keys)",
    description:
      "With `requireSuite`, the suite is evaluated against `slug@version` and the label moves only if the pass rate reaches `minPass` (default 1); the answer is 202 with the evaluation, and the label's history records the outcome either way. Without it, the label moves at once (200).",
    auth: LABELS,
    request: { body: promoteRequest, required: true },
    responses: {
      "200": { description: "Moved.", body: labelMoveSchema },
      "202": { description: "The evaluation deciding the promotion is queued.", body: promotionStartedSchema, headers: EVALUATION_LOCATION },
    },
    errors: ["validation_failed", "unauthorized", "forbidden", "workflow_not_found", "suite_not_found", "unsupported_media_type", "evaluation_queue_full"],
    handler: promoteLabel,
  }),
  endpoint({
    method: "DELETE",
    path: "/api/v1/workflows/{slug}/labels/{label}",
    operationId: "removeWorkflowLabel",
    summary: "Remove a label (editor keys; the production label admin keys)",
    auth: LABELS,
    responses: { "204": { description: "Removed." } },
    errors: ["validation_failed", "unauthorized", "forbidden", "workflow_not_found"],
    handler: deleteLabel,
  }),
  endpoint({
    method: "GET",
    path: "/api/v1/workflows/{slug}/diff",
    operationId: "diffWorkflowVersions",
    summary: "What changed between two versions: instructions (line diff), parameters, contexts, and the default schema with each change classified breaking or not",
    auth: VIEWER,
    parameters: [
      { name: "from", in: "query", required: true, schema: { type: "string" } },
      { name: "to", in: "query", required: true, schema: { type: "string" } },
    ],
    responses: { "200": { description: "The diff.", body: workflowDiffSchema } },
    errors: ["validation_failed", "unauthorized", "workflow_not_found"],
    handler: diffVersions,
  }),
];
