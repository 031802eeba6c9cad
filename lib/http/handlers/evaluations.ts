import "server-only";
import {
  createEvaluationRequest,
  EVALUATION_STATUSES,
  evaluationListSchema,
  evaluationReportSchema,
  evaluationSummarySchema,
  queuedEvaluationSchema,
  suiteListSchema,
  suiteDocumentSchema,
  suiteSchema,
  type EvaluationReport,
  type EvaluationSummary,
  type EvaluationTarget,
  type EvaluationTotals,
  type SuiteDocument,
} from "../../api/suite-shapes";
import { SLUG } from "../../domain/names";
import { validationError } from "../../errors";
import type { EvaluationRecord, EvaluationStatus, SuiteRecord } from "../../store/store-types";
import type { EvaluationService } from "../../evals/evaluation-service";
import { changesBetween } from "../../audit/audit-log";
import { audit } from "../audit-origin";
import { readJsonBody } from "../body";
import { EVALUATION_LOCATION } from "../doc-parts";
import { listScope } from "../../keys/owner-access";
import { EDITOR, endpoint, VIEWER } from "../endpoint";

const EDIT = EDITOR("Only editor and admin keys may change suites.");
const RUN = EDITOR("Only editor and admin keys may start or cancel evaluations (their cases are metered runs).");
import { reply } from "../problem";
import type { RouteContext } from "../route";
import { maskCallback } from "../run-view";

/** A target as callers see it: its callback masked as every view masks one (header values, URL credentials). */
const maskTarget = (target: EvaluationTarget): EvaluationTarget => ({ ...target, callback: target.callback && maskCallback(target.callback) });

const suiteView = (suite: SuiteRecord) => ({ slug: suite.slug, version: suite.version, keyId: suite.keyId, createdAt: suite.createdAt, updatedAt: suite.updatedAt, document: suite.document as SuiteDocument });

/** An evaluation as lists, a cancel and the end of its event stream show it, with its totals. */
const summaryView = (evaluation: EvaluationRecord, totals: EvaluationTotals): EvaluationSummary => ({
  id: evaluation.id,
  suite: evaluation.suiteSlug,
  suiteVersion: evaluation.suiteVersion,
  status: evaluation.status,
  target: maskTarget(evaluation.target as EvaluationTarget),
  totals,
  error: evaluation.error && { code: evaluation.error.code, detail: evaluation.error.detail },
  createdAt: evaluation.createdAt,
  startedAt: evaluation.startedAt,
  finishedAt: evaluation.finishedAt,
});

const summaryOf = async (service: EvaluationService, evaluation: EvaluationRecord) => summaryView(evaluation, await service.totals(evaluation));

const checkSlug = (slug: string) => {
  if (!SLUG.test(slug)) throw validationError([{ path: "slug", message: "must be 1-128 characters of letters, digits, '.', '_' or '-'" }]);
};

/** GET /api/v1/suites: the caller's suites (an admin key's: all). */
const listSuites = async ({ runtime, principal }: RouteContext<Record<string, string>>): Promise<Response> => {
  const caller = await principal();
  const suites = await runtime.services.suites.list(caller);
  return reply(suiteListSchema, {
    suites: suites.map((s) => {
      const document = s.document as SuiteDocument;
      return { slug: s.slug, version: s.version, keyId: s.keyId, cases: document.cases.length, workflow: document.workflow ?? null, description: document.description ?? null, updatedAt: s.updatedAt };
    }),
  });
};

/** GET, PUT and DELETE /api/v1/suites/{slug}: suites belong to the key that created them (admin keys reach all). */
const getSuite = async ({ runtime, principal, params }: RouteContext<{ slug: string }>): Promise<Response> =>
  reply(suiteSchema, suiteView(await runtime.services.suites.readable(await principal(), params.slug)));
const putSuiteEntry = async (ctx: RouteContext<{ slug: string }>): Promise<Response> => {
    const { request, runtime, principal, params } = ctx;
    const caller = await principal();
    checkSlug(params.slug);
    const body = await readJsonBody(request, runtime.config.limits.bodyBytes, runtime.config.limits.jsonDepth);
    const before = await runtime.services.suites.readable(caller, params.slug).catch(() => null);
    const { suite, created } = await runtime.services.suites.put(caller, params.slug, body, new Date());
    // The definition's fields that changed (cases, judges, …), with the version each is.
    const fields = (s: SuiteRecord | null) => (s ? { version: s.version, ...s.document } : null);
    await audit(ctx, created ? "suite.create" : "suite.update", { kind: "suite", id: suite.slug }, changesBetween(created ? null : fields(before), fields(suite)));
    return reply(suiteSchema, suiteView(suite), { status: created ? 201 : 200 });
};
const deleteSuiteEntry = async (ctx: RouteContext<{ slug: string }>): Promise<Response> => {
    const { runtime, principal, params } = ctx;
    const caller = await principal();
    const before = await runtime.services.suites.readable(caller, params.slug).catch(() => null);
    await runtime.services.suites.delete(caller, params.slug);
    await audit(ctx, "suite.delete", { kind: "suite", id: params.slug }, changesBetween({ version: before?.version ?? null }, { version: null }));
    return new Response(null, { status: 204 });
};


/** POST (start) and GET (list, newest first) /api/v1/suites/{slug}/evaluations. */
const startEvaluation = async ({ runtime, principal, params, body }: RouteContext<{ slug: string }>): Promise<Response> => {
    const caller = await principal();
    const request = await body(createEvaluationRequest);
    const evaluation = await runtime.evaluations.create(caller, params.slug, request);
    return reply(queuedEvaluationSchema, { id: evaluation.id, status: "queued" }, { status: 202, headers: { Location: `/api/v1/evaluations/${evaluation.id}` } });
};
const listEvaluations = async ({ request, runtime, principal, params }: RouteContext<{ slug: string }>): Promise<Response> => {
    const caller = await principal();
    const query = new URL(request.url).searchParams;
    const status = query.get("status") ?? undefined;
    if (status !== undefined && !(EVALUATION_STATUSES as readonly string[]).includes(status)) throw validationError([{ path: "?status", message: `must be one of ${EVALUATION_STATUSES.join(", ")}` }]);
    const limit = Number(query.get("limit") ?? "20");
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw validationError([{ path: "?limit", message: "must be a whole number from 1 to 100" }]);
    const rows = await runtime.services.suites.evaluations({ suiteSlug: params.slug, ...listScope(caller), status: status as EvaluationStatus | undefined, limit });
    return reply(evaluationListSchema, { evaluations: await Promise.all(rows.map((e) => summaryOf(runtime.evaluations, e))) });
};

/** GET /api/v1/evaluations/{id}: the whole report. */
const getEvaluation = async ({ runtime, principal, params }: RouteContext<{ id: string }>): Promise<Response> => {
  const report: EvaluationReport = await runtime.evaluations.report(await principal(), params.id);
  return reply(evaluationReportSchema, { ...report, target: maskTarget(report.target) });
};

/** POST /api/v1/evaluations/{id}/cancel. */
const cancelEvaluation = async ({ runtime, principal, params }: RouteContext<{ id: string }>): Promise<Response> => {
  const evaluation = await runtime.evaluations.cancel(await principal(), params.id);
  return reply(evaluationSummarySchema, await summaryOf(runtime.evaluations, evaluation));
};

/**
 * GET /api/v1/evaluations/{id}/events: progress as server-sent events. Each case result is an
 * `event: result` whose `id:` is its order of recording (Last-Event-ID resumes after it), followed
 * by `event: progress` with the counts; the stream ends with `event: end` (status and totals).
 * Results are read from storage, so any replica can serve the stream; every follower of an
 * evaluation in this process shares one reader of it (`EvaluationFollowers`), woken at once by this
 * process's own results and looking for others' every second.
 */
const evaluationEvents = async ({ request, runtime, principal, params }: RouteContext<{ id: string }>): Promise<Response> => {
  const evaluation = await runtime.evaluations.readable(await principal(), params.id);
  const lastEventId = request.headers.get("last-event-id") ?? new URL(request.url).searchParams.get("lastEventId") ?? "0";
  if (!/^\d{1,15}$/.test(lastEventId)) throw validationError([{ path: "Last-Event-ID", message: "must be the id of an event this stream sent" }]);
  const encoder = new TextEncoder();
  let stop = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true;
      let quiet = true;
      const send = (text: string) => {
        if (!open) return;
        quiet = false;
        controller.enqueue(encoder.encode(text));
      };
      const keepAlive = setInterval(() => {
        if (quiet) send(": ping\n\n");
        quiet = true;
      }, runtime.config.limits.streamKeepAliveMs);
      keepAlive.unref();
      let unfollow = () => {};
      /** Stops following; the stream ends unless the client cancelled it (then it has ended). */
      const close = (cancelled = false) => {
        if (!open) return;
        open = false;
        clearInterval(keepAlive);
        unfollow();
        request.signal.removeEventListener("abort", onAbort);
        if (cancelled) return;
        try {
          controller.close();
        } catch {
          // Cancelled by the client in the meantime: it has ended already.
        }
      };
      const onAbort = () => close();
      stop = () => close(true);
      request.signal.addEventListener("abort", onAbort, { once: true });
      unfollow = runtime.evaluations.follow(evaluation, Number(lastEventId), {
        result: (seq, data) => send(`id: ${seq}\nevent: result\ndata: ${data}\n\n`),
        progress: (progress) => send(`event: progress\ndata: ${JSON.stringify(progress)}\n\n`),
        end: (current, totals) => {
          send(`event: end\ndata: ${JSON.stringify(current && totals ? summaryView(current, totals) : { id: evaluation.id, status: "failed" })}\n\n`);
          close();
        },
      });
      if (request.signal.aborted) close();
    },
    cancel() {
      stop();
    },
  });
  return new Response(body, { headers: { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store", "X-Accel-Buffering": "no" } });
};

export const endpoints = [
  endpoint({
    method: "GET",
    path: "/api/v1/suites",
    operationId: "listSuites",
    summary: "The key's test suites (admin keys: all)",
    auth: VIEWER,
    responses: { "200": { description: "Suites.", body: suiteListSchema } },
    errors: ["unauthorized"],
    handler: listSuites,
  }),
  endpoint({
    method: "GET",
    path: "/api/v1/suites/{slug}",
    operationId: "getSuite",
    summary: "A test suite's document",
    auth: VIEWER,
    responses: { "200": { description: "The suite.", body: suiteSchema } },
    errors: ["unauthorized", "suite_not_found"],
    handler: getSuite,
  }),
  endpoint({
    method: "PUT",
    path: "/api/v1/suites/{slug}",
    operationId: "putSuite",
    summary: "Create or replace a test suite (its key's, or any for admin keys); each change is a new version",
    auth: EDIT,
    request: { body: suiteDocumentSchema, required: true },
    responses: { "200": { description: "Replaced.", body: suiteSchema }, "201": { description: "Created.", body: suiteSchema } },
    errors: ["validation_failed", "unauthorized", "conflict", "quota_exceeded", "payload_too_large", "unsupported_media_type", "storage_full"],
    handler: putSuiteEntry,
  }),
  endpoint({
    method: "DELETE",
    path: "/api/v1/suites/{slug}",
    operationId: "deleteSuite",
    summary: "Delete a test suite (its evaluations stay)",
    auth: EDIT,
    responses: { "204": { description: "Deleted." } },
    errors: ["unauthorized", "suite_not_found"],
    handler: deleteSuiteEntry,
  }),
  endpoint({
    method: "GET",
    path: "/api/v1/suites/{slug}/evaluations",
    operationId: "listEvaluations",
    summary: "The suite's evaluations, newest first (`?status=`, `?limit=`)",
    auth: VIEWER,
    responses: { "200": { description: "Evaluations.", body: evaluationListSchema } },
    errors: ["validation_failed", "unauthorized"],
    handler: listEvaluations,
  }),
  endpoint({
    method: "POST",
    path: "/api/v1/suites/{slug}/evaluations",
    operationId: "startEvaluation",
    summary: "Run the suite's cases as one evaluation, in the background",
    description:
      "Every case run is an ordinary run of the key. Follow it with GET /api/v1/evaluations/{id}/events (SSE) or poll GET /api/v1/evaluations/{id}; with a callback, the signed `evaluation.completed` event is sent when it ends.",
    auth: RUN,
    request: { body: createEvaluationRequest, required: true },
    responses: { "202": { description: "Queued.", body: queuedEvaluationSchema, headers: EVALUATION_LOCATION } },
    errors: ["validation_failed", "unauthorized", "forbidden", "suite_not_found", "workflow_not_found", "evaluation_not_found", "unsupported_media_type", "evaluation_queue_full"],
    handler: startEvaluation,
  }),
  endpoint({
    method: "GET",
    path: "/api/v1/evaluations/{id}",
    operationId: "getEvaluation",
    summary: "An evaluation: totals, each case and field over its repeats, and the comparison with its baseline",
    auth: VIEWER,
    responses: { "200": { description: "The evaluation.", body: evaluationReportSchema } },
    errors: ["unauthorized", "evaluation_not_found"],
    handler: getEvaluation,
  }),
  endpoint({
    method: "POST",
    path: "/api/v1/evaluations/{id}/cancel",
    operationId: "cancelEvaluation",
    summary: "Cancel a queued or running evaluation (case runs in flight are cancelled)",
    auth: RUN,
    responses: { "200": { description: "Cancelled.", body: evaluationSummarySchema } },
    errors: ["unauthorized", "evaluation_not_found", "conflict"],
    handler: cancelEvaluation,
  }),
  endpoint({
    method: "GET",
    path: "/api/v1/evaluations/{id}/events",
    operationId: "followEvaluation",
    summary: "An evaluation's progress as server-sent events",
    description:
      "`event: result` for each case run as it is recorded (its `id:` resumes with Last-Event-ID), `event: progress` with the counts, and finally `event: end` with the EvaluationSummary.",
    auth: VIEWER,
    responses: { "200": { description: "The event stream.", content: { "text/event-stream": { schema: { type: "string" } } } } },
    errors: ["validation_failed", "unauthorized", "evaluation_not_found"],
    handler: evaluationEvents,
  }),
];
