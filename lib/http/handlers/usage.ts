import "server-only";
import { usageQuery } from "../../api/requests";
import { usageReportSchema } from "../../api/responses";
import { validationError, zodFieldErrors } from "../../errors";
import { listScope } from "../../keys/owner-access";
import { endpoint, VIEWER } from "../endpoint";
import { reply } from "../problem";

const DAY_MS = 86_400_000;
/** The longest range one report covers. */
const MAX_RANGE_MS = 400 * DAY_MS;

export const endpoints = [
  endpoint({
    method: "GET",
    path: "/api/v1/usage",
    operationId: "getUsage",
    summary: "Runs, errors, tokens, cost and p50/p95 duration of finished runs, per workflow, model or key and per hour or day (an editor key sees its own; admin and viewer keys their project's)",
    auth: VIEWER,
    parameters: [
      { name: "from", in: "query", schema: { type: "string", format: "date-time" }, description: "Default: 7 days before `to`." },
      { name: "to", in: "query", schema: { type: "string", format: "date-time" }, description: "Default: now." },
      { name: "groupBy", in: "query", schema: { enum: ["workflow", "model", "key"], default: "workflow" } },
      { name: "bucket", in: "query", schema: { enum: ["hour", "day"] }, description: "Default: hour for ranges up to 2 days, else day." },
      { name: "keyId", in: "query", schema: { type: "string" }, description: "Admin keys: one key only." },
    ],
    responses: { "200": { description: "The report.", body: usageReportSchema } },
    errors: ["validation_failed", "unauthorized"],
    /** A key's own usage (admin and viewer keys: their project's, or one of its keys' with ?keyId=). */
    handler: async ({ request, runtime, principal }) => {
      const caller = await principal();
      const parsed = usageQuery.safeParse(Object.fromEntries(new URL(request.url).searchParams), { reportInput: true });
      if (!parsed.success) throw validationError(zodFieldErrors(parsed.error).map((e) => ({ ...e, path: `?${e.path.slice(1)}` })));
      const q = parsed.data;
      const to = q.to ? new Date(q.to) : new Date();
      const from = q.from ? new Date(q.from) : new Date(to.getTime() - 7 * DAY_MS);
      if (from.getTime() >= to.getTime()) throw validationError([{ path: "?from", message: "must be before to" }]);
      if (to.getTime() - from.getTime() > MAX_RANGE_MS) throw validationError([{ path: "?from", message: "the range may span at most 400 days" }]);
      const scope = listScope(caller);
      if (q.keyId !== undefined && scope.keyId !== undefined && q.keyId !== caller.keyId) throw validationError([{ path: "?keyId", message: "only admin and viewer keys may read other keys' usage (of their project)" }]);
      const report = await runtime.services.runs.usage({
        from: from.toISOString(),
        to: to.toISOString(),
        keyId: scope.keyId ?? q.keyId ?? null,
        projectId: scope.projectId ?? null,
        groupBy: q.groupBy,
        bucket: q.bucket ?? (to.getTime() - from.getTime() <= 2 * DAY_MS ? "hour" : "day"),
      });
      return reply(usageReportSchema, report);
    },
  }),
];
