import "server-only";
import { DEFAULT_PROJECT_ID } from "../domain/roles";
import type { AuditEvent } from "./audit-types";
import type { StoreRunner } from "./runner";
import type { Store } from "./store-types";

interface AuditRow {
  seq: number | string;
  at: string;
  project_id: string | null;
  actor_kind: string;
  actor_id: string | null;
  actor_label: string;
  ip: string | null;
  user_agent: string | null;
  action: string;
  subject_kind: string;
  subject_id: string;
  changes: string;
}

/**
 * The audit log, written once for both backends: appended, read newest first a page at a time, never
 * changed or deleted. Its rows name their subject by kind and id without a foreign key, so an entry
 * stays when the key, share or workflow it records is deleted.
 */
export function auditStore(db: StoreRunner): Store["audit"] {
  return {
    async append(entry) {
      await db.run(
        `INSERT INTO audit_events (at, project_id, actor_kind, actor_id, actor_label, ip, user_agent, action, subject_kind, subject_id, changes)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [entry.at, entry.projectId, entry.actor.kind, entry.actor.id, entry.actor.label, entry.ip, entry.userAgent, entry.action, entry.subject.kind, entry.subject.id, JSON.stringify(entry.changes)],
      );
    },
    async list(filter) {
      const where: string[] = [];
      const params: unknown[] = [];
      const add = (sql: (p: string) => string, value: unknown) => {
        params.push(value);
        where.push(sql(`$${params.length}`));
      };
      if (filter.projectId !== undefined) add((p) => `(project_id = ${p}${filter.projectId === DEFAULT_PROJECT_ID ? " OR project_id IS NULL" : ""})`, filter.projectId);
      if (filter.actorId !== undefined) add((p) => `actor_id = ${p}`, filter.actorId);
      if (filter.actionPrefix !== undefined) add((p) => db.dialect.startsWith("action", p), filter.actionPrefix);
      if (filter.subjectKind !== undefined) add((p) => `subject_kind = ${p}`, filter.subjectKind);
      if (filter.subjectId !== undefined) add((p) => `subject_id = ${p}`, filter.subjectId);
      if (filter.from !== undefined) add((p) => `at >= ${p}`, filter.from);
      if (filter.to !== undefined) add((p) => `at < ${p}`, filter.to);
      if (filter.beforeSeq !== undefined) add((p) => `seq < ${p}`, filter.beforeSeq);
      params.push(filter.limit);
      const rows = await db.all<AuditRow>(
        `SELECT * FROM audit_events ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY seq DESC LIMIT $${params.length}`,
        params,
      );
      return rows.map(toAuditEvent);
    },
  };
}

function toAuditEvent(row: AuditRow): AuditEvent {
  return {
    seq: Number(row.seq),
    at: row.at,
    projectId: row.project_id,
    actor: { kind: row.actor_kind as AuditEvent["actor"]["kind"], id: row.actor_id, label: row.actor_label },
    ip: row.ip,
    userAgent: row.user_agent,
    action: row.action,
    subject: { kind: row.subject_kind, id: row.subject_id },
    changes: JSON.parse(row.changes) as AuditEvent["changes"],
  };
}
