import "server-only";
import { auditPageSchema, auditQuery } from "../../api/audit-shapes";
import { validationError, zodFieldErrors } from "../../errors";
import { ADMIN as ADMIN_ONLY, endpoint } from "../endpoint";
import { reply } from "../problem";

const ADMIN = ADMIN_ONLY("Only admin keys may read the audit log.");

export const endpoints = [
  endpoint({
    method: "GET",
    path: "/api/v1/audit",
    operationId: "listAuditEvents",
    summary: "The audit log, newest first (admin keys): who changed keys, workflows, labels, contexts, suites and shares, when, from where, and what changed",
    auth: ADMIN,
    parameters: [
      { name: "actor", in: "query", schema: { type: "string" }, description: "Only changes made by this key (its id)." },
      { name: "action", in: "query", schema: { type: "string" }, description: "Only actions starting with this (`key.`, `workflow.label.`, or a whole name)." },
      { name: "subject", in: "query", schema: { type: "string" }, description: "Only changes to this kind of thing, or to one (`kind:id`: `key:key_…`, `workflow:invoice`, `share:shr_…`)." },
      { name: "from", in: "query", schema: { type: "string", format: "date-time" }, description: "Only changes at or after this instant." },
      { name: "to", in: "query", schema: { type: "string", format: "date-time" }, description: "Only changes before this instant." },
      { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 200, default: 50 } },
      { name: "cursor", in: "query", schema: { type: "string" }, description: "`nextCursor` of the previous page." },
    ],
    responses: { "200": { description: "A page of the log.", body: auditPageSchema } },
    errors: ["validation_failed", "unauthorized", "forbidden"],
    handler: async ({ request, runtime, principal }) => {
      const parsed = auditQuery.safeParse(Object.fromEntries(new URL(request.url).searchParams), { reportInput: true });
      if (!parsed.success) throw validationError(zodFieldErrors(parsed.error).map((e) => ({ ...e, path: `?${e.path.slice(1)}` })));
      const { actor, action, subject, from, to, limit, cursor } = parsed.data;
      let beforeSeq: number | undefined;
      if (cursor !== undefined) {
        beforeSeq = Number(Buffer.from(cursor, "base64url").toString("utf8"));
        if (!Number.isSafeInteger(beforeSeq) || beforeSeq < 1) throw validationError([{ path: "?cursor", message: "is not a cursor this API returned" }]);
      }
      const [subjectKind, ...rest] = subject?.split(":") ?? [];
      const events = await runtime.services.audit.list({
        projectId: (await principal()).projectId,
        actorId: actor,
        actionPrefix: action,
        subjectKind,
        subjectId: rest.length > 0 ? rest.join(":") : undefined,
        from: from === undefined ? undefined : new Date(from).toISOString(),
        to: to === undefined ? undefined : new Date(to).toISOString(),
        beforeSeq,
        limit: limit + 1,
      });
      const page = events.slice(0, limit);
      const next = events.length > limit ? page[page.length - 1]!.seq : null;
      return reply(auditPageSchema, { events: page, nextCursor: next === null ? null : Buffer.from(String(next)).toString("base64url") });
    },
  }),
];
