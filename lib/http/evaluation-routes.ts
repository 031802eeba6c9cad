import "server-only";
import {
  createEvaluationRequest,
  EVALUATION_STATUSES,
  evaluationListSchema,
  evaluationReportSchema,
  evaluationSummarySchema,
  queuedEvaluationSchema,
  suiteListSchema,
  suiteSchema,
  type EvaluationReport,
  type EvaluationSummary,
  type EvaluationTarget,
  type EvaluationTotals,
  type SuiteDocument,
} from "../api/suites";
import { SLUG } from "../domain/names";
import { validationError } from "../errors";
import { readableSuite } from "../evals/access";
import { deleteSuite, putSuite } from "../evals/suites";
import type { EvaluationRecord, EvaluationStatus, SuiteRecord } from "../store/types";
import type { EvaluationService } from "../evals/service";
import { readJsonBody } from "./body";
import { reply } from "./problem";
import { route } from "./route";
import { maskCallback } from "./run-view";

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
export const listSuites = route(async ({ runtime, principal }) => {
  const caller = await principal();
  const suites = await runtime.store.suites.list(caller.admin ? undefined : caller.keyId);
  return reply(suiteListSchema, {
    suites: suites.map((s) => {
      const document = s.document as SuiteDocument;
      return { slug: s.slug, version: s.version, keyId: s.keyId, cases: document.cases.length, workflow: document.workflow ?? null, description: document.description ?? null, updatedAt: s.updatedAt };
    }),
  });
});

/** GET, PUT and DELETE /api/v1/suites/{slug}: suites belong to the key that created them (admin keys reach all). */
export const suiteRoutes = {
  GET: route<{ slug: string }>(async ({ runtime, principal, params }) => reply(suiteSchema, suiteView(await readableSuite(runtime.store, await principal(), params.slug)))),
  PUT: route<{ slug: string }>(async ({ request, runtime, principal, params }) => {
    const caller = await principal();
    checkSlug(params.slug);
    const body = await readJsonBody(request, runtime.config.limits.bodyBytes, runtime.config.limits.jsonDepth);
    const { suite, created } = await putSuite(runtime.store, runtime.schemas, runtime.config.limits, caller, params.slug, body, new Date());
    return reply(suiteSchema, suiteView(suite), { status: created ? 201 : 200 });
  }),
  DELETE: route<{ slug: string }>(async ({ runtime, principal, params }) => {
    await deleteSuite(runtime.store, await principal(), params.slug);
    return new Response(null, { status: 204 });
  }),
};


/** POST (start) and GET (list, newest first) /api/v1/suites/{slug}/evaluations. */
export const suiteEvaluationRoutes = {
  POST: route<{ slug: string }>(async ({ runtime, principal, params, body }) => {
    const caller = await principal();
    const request = await body(createEvaluationRequest);
    const evaluation = await runtime.evaluations.create(caller, params.slug, request);
    return reply(queuedEvaluationSchema, { id: evaluation.id, status: "queued" }, { status: 202, headers: { Location: `/api/v1/evaluations/${evaluation.id}` } });
  }),
  GET: route<{ slug: string }>(async ({ request, runtime, principal, params }) => {
    const caller = await principal();
    const query = new URL(request.url).searchParams;
    const status = query.get("status") ?? undefined;
    if (status !== undefined && !(EVALUATION_STATUSES as readonly string[]).includes(status)) throw validationError([{ path: "?status", message: `must be one of ${EVALUATION_STATUSES.join(", ")}` }]);
    const limit = Number(query.get("limit") ?? "20");
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw validationError([{ path: "?limit", message: "must be a whole number from 1 to 100" }]);
    const rows = await runtime.store.evaluations.list({ suiteSlug: params.slug, keyId: caller.admin ? undefined : caller.keyId, status: status as EvaluationStatus | undefined, limit });
    return reply(evaluationListSchema, { evaluations: await Promise.all(rows.map((e) => summaryOf(runtime.evaluations, e))) });
  }),
};

/** GET /api/v1/evaluations/{id}: the whole report. */
export const getEvaluation = route<{ id: string }>(async ({ runtime, principal, params }) => {
  const report: EvaluationReport = await runtime.evaluations.report(await principal(), params.id);
  return reply(evaluationReportSchema, { ...report, target: maskTarget(report.target) });
});

/** POST /api/v1/evaluations/{id}/cancel. */
export const cancelEvaluation = route<{ id: string }>(async ({ runtime, principal, params }) => {
  const evaluation = await runtime.evaluations.cancel(await principal(), params.id);
  return reply(evaluationSummarySchema, await summaryOf(runtime.evaluations, evaluation));
});

/**
 * GET /api/v1/evaluations/{id}/events: progress as server-sent events. Each case result is an
 * `event: result` whose `id:` is its order of recording (Last-Event-ID resumes after it), followed
 * by `event: progress` with the counts; the stream ends with `event: end` (status and totals).
 * Results are read from storage, so any replica can serve the stream; every follower of an
 * evaluation in this process shares one reader of it (`EvaluationFollowers`), woken at once by this
 * process's own results and looking for others' every second.
 */
export const evaluationEvents = route<{ id: string }>(async ({ request, runtime, principal, params }) => {
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
});
