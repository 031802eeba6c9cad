import { z } from "zod";
import { named } from "./shape-registry";

/** Shapes of the audit log's API (GET /api/v1/audit), shared by the handler, the document and the page. */

const instant = z.iso.datetime({ offset: true, error: "must be an ISO 8601 date-time, e.g. 2026-11-01T00:00:00Z" });

/** GET /api/v1/audit: filters and a page. */
export const auditQuery = z
  .object({
    /** The key (or person) who made the changes, by id. */
    actor: z.string().trim().min(1).max(200).optional(),
    /** `key.` lists every change to keys; a whole action name, just those. */
    action: z.string().trim().min(1).max(100).regex(/^[a-z][a-z0-9_.]*$/, "must be an action name or its start, such as key. or workflow.label.move").optional(),
    /** `kind` or `kind:id` (`key:key_…`, `workflow:invoice`). */
    subject: z.string().trim().min(1).max(300).regex(/^[a-z]+(:.+)?$/, "must be kind or kind:id, such as workflow:invoice").optional(),
    from: instant.optional(),
    to: instant.optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: z.string().max(100).optional(),
  })
  .strict();

export type AuditQuery = z.infer<typeof auditQuery>;

const change = z.strictObject({ before: z.unknown().optional(), after: z.unknown().optional() });

export const auditEventSchema = z
  .strictObject({
    seq: z.number().int(),
    at: z.string(),
    projectId: z.string().nullable(),
    actor: z.strictObject({
      kind: z.enum(["key", "person", "system"]),
      id: z.string().nullable(),
      label: z.string(),
    }),
    ip: z.string().nullable().describe("The client's address: the socket's, or X-Forwarded-For from a proxy in server.trustedProxies."),
    userAgent: z.string().nullable(),
    action: z.string().describe("A stable dotted name: key.create, key.limits, workflow.label.move, share.revoke, …"),
    subject: z.strictObject({ kind: z.string(), id: z.string() }),
    changes: z.record(z.string(), change).describe("Each changed field before and after; secrets are never recorded."),
  })
  .apply(named({ id: "AuditEvent", description: "One recorded change: who, when, from where, to what, and what changed." }));

export type AuditEventView = z.infer<typeof auditEventSchema>;

export const auditPageSchema = z
  .strictObject({
    events: z.array(auditEventSchema),
    nextCursor: z.string().nullable().describe("Pass as `cursor` for the next (older) page; null on the last."),
  })
  .apply(named({ id: "AuditPage", description: "A page of the audit log, newest first." }));
