import "server-only";
import { createShareRequest, shareListSchema, shareSchema, sharedViewSchema, type SharedView } from "../../api/lifecycle-shapes";
import type { EvaluationReport } from "../../api/suite-shapes";
import { ERROR_CODES, GenserveError, type ErrorCode } from "../../errors";
import { parsePointer } from "../../json/pointer";
import type { Principal } from "../../keys/api-keys";
import type { Runtime } from "../../server/runtime";
import type { RunRecord, ShareRecord } from "../../store/store-types";
import { changesBetween } from "../../audit/audit-log";
import { audit } from "../audit-origin";
import { EDITOR, endpoint, VIEWER } from "../endpoint";

const SHARE = EDITOR("Only editor and admin keys may make or revoke share links.");
import { reply } from "../problem";
import type { RouteContext } from "../route";
import { MASK } from "../run-view";


const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const MAX_MS = 365 * UNIT_MS.d;

/** "7d" → the time it ends from now; "never" → null. */
function expiry(expiresIn: string, now: Date): string | null {
  if (expiresIn === "never") return null;
  const ms = Number(expiresIn.slice(0, -1)) * UNIT_MS[expiresIn.at(-1) as keyof typeof UNIT_MS];
  if (ms > MAX_MS) throw new GenserveError("validation_failed", { detail: "A share link lasts at most 365 days.", errors: [{ path: "/expiresIn", message: "must be at most 365d" }] });
  return new Date(now.getTime() + ms).toISOString();
}

const shareView = (share: ShareRecord, url?: string) => ({
  id: share.id,
  kind: share.kind,
  targetId: share.targetId,
  hideFields: share.hideFields,
  expiresAt: share.expiresAt,
  revokedAt: share.revokedAt,
  createdAt: share.createdAt,
  ...(url && { url }),
});

/** A copy of `value` with the value at each pointer replaced by the mask (pointers that lead nowhere are skipped). */
export function masked(value: unknown, pointers: readonly string[]): unknown {
  if (pointers.length === 0 || value === null || typeof value !== "object") return value;
  const copy = structuredClone(value) as Record<string, unknown>;
  for (const pointer of pointers) {
    const segments = parsePointer(pointer);
    let parent: unknown = copy;
    for (const segment of segments.slice(0, -1)) parent = parent !== null && typeof parent === "object" ? (parent as Record<string, unknown>)[segment] : undefined;
    const last = segments.at(-1);
    if (last !== undefined && parent !== null && typeof parent === "object" && Object.hasOwn(parent, last)) (parent as Record<string, unknown>)[last] = MASK;
  }
  return copy;
}

/** A share link's creation, for a run or an evaluation the caller may read. */
function createShare(kind: ShareRecord["kind"], read: (ctx: { runtime: Runtime; caller: Principal; id: string }) => Promise<unknown>) {
  return async (ctx: RouteContext<{ id: string }>): Promise<Response> => {
    const { request, runtime, principal, params, body } = ctx;
    const caller = await principal();
    await read({ runtime, caller, id: params.id });
    const input = await body(createShareRequest, { optional: true });
    const now = new Date();
    const hideFields = [...new Set(input.hideFields ?? [])];
    const { share, token } = await runtime.services.shares.create(caller, { kind, targetId: params.id, hideFields, expiresAt: expiry(input.expiresIn ?? "7d", now) }, now);
    const url = new URL(`/s/${token}`, runtime.publicUrl === "" ? new URL(request.url).origin : runtime.publicUrl).toString();
    // Never the link's URL: it holds the token.
    await audit(ctx, "share.create", { kind: "share", id: share.id }, changesBetween(null, { kind: share.kind, targetId: share.targetId, hideFields: share.hideFields, expiresAt: share.expiresAt }));
    return reply(shareSchema, shareView(share, url), { status: 201, headers: { Location: `/api/v1/shares/${share.id}` } });
  };
}

/** POST /api/v1/runs/{id}/share */
const shareRun = createShare("run", ({ runtime, caller, id }) => runtime.services.runs.readable(caller, id));
/** POST /api/v1/evaluations/{id}/share */
const shareEvaluation = createShare("evaluation", ({ runtime, caller, id }) => runtime.evaluations.readable(caller, id));

/** GET /api/v1/shares: the caller's links (an admin key's: every key's), newest first. */
const listShares = async ({ runtime, principal }: RouteContext<Record<string, string>>): Promise<Response> => {
  const caller = await principal();
  const shares = await runtime.services.shares.list(caller);
  return reply(shareListSchema, { shares: shares.map((s) => shareView(s)) });
};

/** DELETE /api/v1/shares/{id}: revokes a link (by the key that made it, or an admin); it answers 404 from then on. */
const revokeShare = async (ctx: RouteContext<{ id: string }>): Promise<Response> => {
  const { runtime, principal, params } = ctx;
  await runtime.services.shares.revoke(await principal(), params.id);
  await audit(ctx, "share.revoke", { kind: "share", id: params.id }, changesBetween({ revokedAt: null }, { revokedAt: new Date().toISOString() }));
  return new Response(null, { status: 204 });
};

/**
 * GET /api/v1/shared/{token}: what a link shows, without a key (`ShareLinks.resolve` says which
 * links are gone: the same 404 for each). A run shows its input, its output
 * (hidden fields masked), the problem's code and words, usage and timing, and how its stream
 * arrived; never the key, the callback, attachment addresses or other runs. An evaluation shows
 * its report with outputs masked the same way and without run ids or the callback.
 */
const sharedView = async ({ runtime, params }: RouteContext<{ token: string }>): Promise<Response> => {
  const target = await runtime.services.shares.resolve(params.token);
  const { share } = target;
  const view: SharedView = { kind: share.kind, expiresAt: share.expiresAt, hiddenFields: share.hideFields };
  if (target.kind === "run") view.run = sharedRun(target.run, share.hideFields);
  else view.evaluation = sharedReport(await runtime.evaluations.reportFor(target.evaluation), share.hideFields);
  return reply(sharedViewSchema, view, { headers: { "Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "X-Robots-Tag": "noindex" } });
};

function sharedRun(run: RunRecord, hide: readonly string[]): NonNullable<SharedView["run"]> {
  const code = run.error?.code as ErrorCode | undefined;
  return {
    operation: run.operation,
    status: run.status,
    workflowSlug: run.workflowSlug,
    workflowVersion: run.workflowVersion,
    input: run.input,
    schema: run.schema,
    output: masked(run.output, hide),
    error: run.error && { code: run.error.code, title: (code && ERROR_CODES[code]?.title) ?? run.error.title, detail: run.error.detail },
    model: run.modelName,
    inputTokens: run.inputTokens,
    outputTokens: run.outputTokens,
    cost: run.cost,
    durationMs: run.durationMs,
    attachments: run.attachments.map((a) => ({ mimeType: a.mimeType, bytes: a.bytes })),
    createdAt: run.createdAt,
    // The pace is of the raw text; with fields hidden it would hint at their length: left out then.
    pace: hide.length > 0 ? null : run.pace,
    // A draft run shows the definition that ran (instructions, model, parameters), as its run page does.
    draft: run.draft,
  };
}

function sharedReport(report: EvaluationReport, hide: readonly string[]): EvaluationReport {
  const isHidden = (path: string) => hide.some((h) => path === h || path.startsWith(`${h}/`));
  return {
    ...report,
    target: { ...report.target, callback: null },
    baseline: report.baseline && {
      ...report.baseline,
      id: "",
      changed: report.baseline.changed.map((c) => (isHidden(c.path) ? { case: c.case, path: c.path, before: MASK, after: MASK } : c)),
    },
    cases: report.cases.map((c) => ({
      ...c,
      runs: c.runs.map((r) => ({
        ...r,
        runId: null,
        output: masked(r.output, hide),
        // A check on a hidden field (or inside one) would show its value: its values are masked too.
        checks: r.checks.map((check) => (isHidden(check.path) ? { ...check, ...(check.actual !== undefined && { actual: MASK }), ...(check.expected !== undefined && { expected: MASK }) } : check)),
      })),
    })),
  };
}

export const endpoints = [
  endpoint({
    method: "POST",
    path: "/api/v1/runs/{id}/share",
    operationId: "shareRun",
    summary: "A read-only link to a run that needs no key (hidden fields masked)",
    auth: SHARE,
    request: { body: createShareRequest, required: false },
    responses: { "201": { description: "The link (its URL is shown only now).", body: shareSchema } },
    errors: ["validation_failed", "unauthorized", "run_not_found", "unsupported_media_type", "quota_exceeded", "storage_full"],
    handler: shareRun,
  }),
  endpoint({
    method: "POST",
    path: "/api/v1/evaluations/{id}/share",
    operationId: "shareEvaluation",
    summary: "A read-only link to an evaluation report that needs no key",
    auth: SHARE,
    request: { body: createShareRequest, required: false },
    responses: { "201": { description: "The link (its URL is shown only now).", body: shareSchema } },
    errors: ["validation_failed", "unauthorized", "evaluation_not_found", "unsupported_media_type", "quota_exceeded", "storage_full"],
    handler: shareEvaluation,
  }),
  endpoint({
    method: "GET",
    path: "/api/v1/shares",
    operationId: "listShares",
    summary: "The key's share links (an admin key's: all)",
    auth: VIEWER,
    responses: { "200": { description: "Links.", body: shareListSchema } },
    errors: ["unauthorized"],
    handler: listShares,
  }),
  endpoint({
    method: "DELETE",
    path: "/api/v1/shares/{id}",
    operationId: "revokeShare",
    summary: "Revoke a share link (the key that made it, or an admin); it answers 404 from then on",
    auth: SHARE,
    responses: { "204": { description: "Revoked." } },
    errors: ["unauthorized", "share_not_found"],
    handler: revokeShare,
  }),
  endpoint({
    method: "GET",
    path: "/api/v1/shared/{token}",
    operationId: "getShared",
    summary: "What a share link shows; needs no key",
    auth: "none",
    responses: { "200": { description: "The shared run or report.", body: sharedViewSchema } },
    errors: ["share_not_found"],
    handler: sharedView,
  }),
];
