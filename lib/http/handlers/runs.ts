import "server-only";
import { replayRequest, replaySchema } from "../../api/lifecycle-shapes";
import { runListQuery } from "../../api/requests";
import { redeliveryResponse, runCancellationSchema, runDetailSchema, runPageSchema } from "../../api/responses";
import { RUN_STATUSES } from "../../domain/run-vocabulary";
import { GenserveError, toProblem, validationError, zodFieldErrors } from "../../errors";
import { runIdAt } from "../../ids";
import { replayRun } from "../../runs/replay";
import type { StreamEvent } from "../../runs/stream-hub";
import type { RunRecord } from "../../store/store-types";
import { RUN_ERRORS, STREAM_CONTENT } from "../doc-parts";
import { listScope } from "../../keys/owner-access";
import { EDITOR, endpoint, VIEWER } from "../endpoint";

const RUN = EDITOR("Only editor and admin keys may cancel, replay or redeliver runs; viewer keys read them.");
import { reply } from "../problem";
import { maskUrl, runListBounds, runListView, runView } from "../run-view";
import { chooseFormat, encoderFor, streamHeaders, streamResponse } from "../stream-format";

/** The final event of a run that ended, from its record (its streamed items are no longer at hand). */
function finalFromRecord(run: RunRecord): StreamEvent {
  return run.status === "succeeded"
    ? { seq: 0, kind: "done", payload: { runId: run.id, object: run.output, metadata: runView(run).metadata, ...(run.grounding && { grounding: run.grounding }) } }
    : { seq: 0, kind: "error", problem: run.error ?? toProblem(new GenserveError("internal", { runId: run.id })) };
}

export const endpoints = [
  endpoint({
    method: "GET",
    path: "/api/v1/runs",
    operationId: "listRuns",
    summary: "List runs, newest first (a key sees its own; an admin key sees all)",
    auth: VIEWER,
    parameters: [
      { name: "workflowSlug", in: "query", schema: { type: "string" } },
      { name: "status", in: "query", schema: { enum: [...RUN_STATUSES] } },
      { name: "operation", in: "query", schema: { enum: ["generate.object", "generate.text", "stream.object"] } },
      { name: "evaluationId", in: "query", schema: { type: "string" }, description: "Only the runs an evaluation made (its cases and judges)." },
      { name: "q", in: "query", schema: { type: "string", minLength: 1, maxLength: 200 }, description: "Only runs whose input contains this text (ignoring case) within its first `limits.runSearchChars` characters (16,384), or whose id it is. One request reads at most `limits.runSearchBytes` (64 MiB) of inputs: past it the page holds what was found (possibly nothing) and a `nextCursor` to search on." },
      { name: "from", in: "query", schema: { type: "string", format: "date-time" }, description: "Only runs created at or after this instant." },
      { name: "to", in: "query", schema: { type: "string", format: "date-time" }, description: "Only runs created before this instant." },
      { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 100, default: 20 } },
      { name: "cursor", in: "query", schema: { type: "string" }, description: "`nextCursor` of the previous page." },
    ],
    responses: { "200": { description: "A page of runs.", body: runPageSchema } },
    errors: ["validation_failed", "unauthorized"],
    handler: async ({ request, runtime, principal }) => {
      const caller = await principal();
      const parsed = runListQuery.safeParse(Object.fromEntries(new URL(request.url).searchParams), { reportInput: true });
      if (!parsed.success) throw validationError(zodFieldErrors(parsed.error).map((e) => ({ ...e, path: `?${e.path.slice(1)}` })));
      const { limit, cursor, status, operation, workflowSlug, evaluationId, q, from, to } = parsed.data;
      let beforeId: string | undefined;
      if (cursor !== undefined) {
        beforeId = Buffer.from(cursor, "base64url").toString("utf8");
        if (!/^run_[0-9A-Z]{26}$/.test(beforeId)) throw validationError([{ path: "?cursor", message: "is not a cursor this API returned" }]);
      }
      // Run ids sort by creation time: a time range is a range of ids, served by the primary key.
      if (to !== undefined) {
        const toId = runIdAt(Date.parse(to));
        if (beforeId === undefined || toId < beforeId) beforeId = toId;
      }
      const fromId = from === undefined ? undefined : runIdAt(Date.parse(from));
      const filter = { ...listScope(caller), status, operation, workflowSlug, evaluationId, beforeId, fromId, search: q, limit: limit + 1 };
      const { runs, scannedTo } = await runtime.services.runs.list(filter, runListBounds(runtime.config.limits));
      const page = runs.slice(0, limit);
      // A full page continues after its last run; a search stopped at its bound, after the last run it looked at.
      const next = runs.length > limit ? page[page.length - 1]!.id : scannedTo;
      return reply(runPageSchema, { runs: page.map(runListView), nextCursor: next === null ? null : Buffer.from(next).toString("base64url") });
    },
  }),
  endpoint({
    method: "GET",
    path: "/api/v1/runs/{id}",
    operationId: "getRun",
    summary: "One run",
    auth: VIEWER,
    responses: { "200": { description: "The run, with its callback's deliveries.", body: runDetailSchema } },
    errors: ["unauthorized", "run_not_found"],
    handler: async ({ runtime, principal, params }) => {
      const run = await runtime.services.runs.readable(await principal(), params.id);
      const event = await runtime.services.runs.callbackEvent(run.id);
      return reply(runDetailSchema, {
        ...runView(run),
        grounding: run.grounding,
        deliveries: event
          ? { eventId: event.id, url: maskUrl(event.url), status: event.status, attempts: event.attempts, nextAttemptAt: event.nextAttemptAt, log: event.deliveries }
          : null,
      });
    },
  }),
  endpoint({
    method: "GET",
    path: "/api/v1/runs/{id}/stream",
    operationId: "resumeStream",
    summary: "Resume a streamed run: events after Last-Event-ID, then the live run to its final event",
    description:
      "Send `Last-Event-ID: N` (or `?lastEventId=N`) with the id of the last event you received. The events are the run's own, replayed as they were (field events too, when the run was started with `?fields=true`). Events are kept for `limits.streamRetentionMs` (10 minutes) after the run ends; later, only the final event (from the stored run) is sent.",
    auth: VIEWER,
    parameters: [{ name: "Last-Event-ID", in: "header", schema: { type: "string" } }],
    responses: { "200": { description: "The stream.", content: STREAM_CONTENT } },
    errors: ["unauthorized", "run_not_found", "stream_unavailable"],
    /**
     * Resumes a streamed run: replays the events after Last-Event-ID, then follows it to its end — from
     * this process's memory when it runs the stream, else (PostgreSQL) from the events the streaming
     * replica shares through the database.
     */
    handler: async ({ request, runtime, principal, params }) => {
      const run = await runtime.services.runs.readable(await principal(), params.id, { streamed: true });
      const url = new URL(request.url);
      const lastEventId = request.headers.get("last-event-id") ?? url.searchParams.get("lastEventId") ?? "0";
      if (!/^\d{1,9}$/.test(lastEventId)) throw validationError([{ path: "Last-Event-ID", message: "must be the id of an event this stream sent" }]);
      const accept = request.headers.get("accept");

      if (runtime.hub.holds(run.id) || runtime.hub.followsOthers) {
        return streamResponse(runtime.hub, run.id, {
          accept,
          afterSeq: Number(lastEventId),
          keepAliveMs: runtime.config.limits.streamKeepAliveMs,
          // Events ran out without a final one: the run ended elsewhere (or its events expired).
          ending: async () => {
            const latest = await runtime.services.runs.latest(run.id);
            return latest && latest.status !== "running" && latest.status !== "queued" ? finalFromRecord(latest) : null;
          },
        });
      }
      if (run.status === "running") {
        throw new GenserveError("stream_unavailable", { detail: "This run is streamed by another server process; resume there, or read the run when it ends." });
      }
      // The items are no longer kept: the stored outcome still ends the stream honestly.
      const text = encoderFor(chooseFormat(accept)).encode(finalFromRecord(run)).replace(/^id: 0\n/, "");
      return new Response(text, { headers: streamHeaders(encoderFor(chooseFormat(accept)).contentType, run.id) });
    },
  }),
  endpoint({
    method: "POST",
    path: "/api/v1/runs/{id}/cancel",
    operationId: "cancelRun",
    summary: "Cancel a queued or running run (the key that made it, or an admin key), on whichever process executes it",
    description:
      "The model call is aborted and the run ends `cancelled` (its `error` the problem `cancelled`), its tokens so far recorded and billed, a streamed run's output so far in the problem's `lastOutput`, and its `run.cancelled` callback sent. Streams following the run end with that problem. A run executing on another process sharing PostgreSQL is stopped within milliseconds (NOTIFY), at worst at that process's next heartbeat (`limits.runLeaseMs / 3`). Cancelling a cancelled run answers it again; any other finished run is a 409 `run_finished`.",
    auth: RUN,
    responses: {
      "200": { description: "The run ended cancelled.", body: runCancellationSchema },
      "202": { description: "The cancel is recorded; the run is being stopped where it executes.", body: runCancellationSchema },
    },
    errors: ["unauthorized", "run_not_found", "run_finished"],
    /**
     * Stops a queued or running run the caller may read (another key's run is a 404, as for GET);
     * 200 once it ended cancelled, 202 while it is being stopped elsewhere.
     */
    handler: async ({ runtime, principal, params }) => {
      const run = await runtime.services.runs.readable(await principal(), params.id);
      const result = await runtime.runs.cancel(run);
      return reply(runCancellationSchema, result, { status: result.status === "running" || result.status === "queued" ? 202 : 200 });
    },
  }),
  endpoint({
    method: "POST",
    path: "/api/v1/runs/{id}/replay",
    operationId: "replayRun",
    summary: "Run a stored run's request again with the same bundle (workflow and context versions, schema, attachments by hash), or on another version or label",
    auth: RUN,
    request: { body: replayRequest, required: false },
    responses: { "201": { description: "The replay, with the differences from the original.", body: replaySchema } },
    errors: [...RUN_ERRORS, "run_not_found", "conflict"],
    /** `{workflowSlug?}`: the same request again, with the same bundle or on another version. */
    handler: async ({ runtime, principal, params, body }) => {
      const caller = await principal();
      const original = await runtime.services.runs.readable(caller, params.id);
      const input = await body(replayRequest, { optional: true });
      const result = await replayRun({ catalog: runtime.catalog, runs: runtime.runs }, caller, original, input);
      return reply(replaySchema, result, { status: 201, headers: { Location: `/api/v1/runs/${result.runId}`, "X-Run-ID": result.runId } });
    },
  }),
  endpoint({
    method: "POST",
    path: "/api/v1/runs/{id}/deliveries/redeliver",
    operationId: "redeliver",
    summary: "Send the run's callback event again (same webhook-id)",
    auth: RUN,
    responses: { "202": { description: "Queued for delivery.", body: redeliveryResponse } },
    errors: ["unauthorized", "run_not_found", "not_found"],
    /** Sends the run's callback event again (same webhook-id, so receivers can deduplicate). */
    handler: async ({ runtime, principal, params }) => {
      const run = await runtime.services.runs.readable(await principal(), params.id);
      const { eventId } = await runtime.services.runs.redeliver(run.id);
      runtime.delivery.kick();
      return reply(redeliveryResponse, { eventId, status: "pending" }, { status: 202 });
    },
  }),
];
