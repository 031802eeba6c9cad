/** The audit log's records: `Store["audit"]`. */

import "server-only";

/** Who made a change: an API key, a person (once people sign in), or genserve itself (the CLI on the host, a gated promotion). */
export interface AuditActor {
  kind: "key" | "person" | "system";
  /** The key's or person's id; null for the system. */
  id: string | null;
  /** A name to show: the key's name, the person's email, "genserve CLI". */
  label: string;
}

/** One change as recorded: what it was done to, and the fields it changed (before and after; never a secret). */
export interface AuditEntry {
  at: string;
  /** The project the subject belongs to (null until projects exist, and for changes outside any). */
  projectId: string | null;
  actor: AuditActor;
  /** The client's address as the server saw it; null when it was not over HTTP. */
  ip: string | null;
  /** The client's User-Agent, cut short. */
  userAgent: string | null;
  /** A stable dotted name: `key.create`, `workflow.label.move`, … (lib/audit/audit-log.ts lists them). */
  action: string;
  subject: { kind: string; id: string };
  changes: Record<string, { before?: unknown; after?: unknown }>;
}

export type AuditEvent = AuditEntry & { seq: number };

export interface AuditFilter {
  /** Only this project's entries; the default project's also holds those of no project (the CLI, the first start). */
  projectId?: string;
  actorId?: string;
  /** `key.` matches `key.create`, `key.revoke`…; a whole name matches itself. */
  actionPrefix?: string;
  subjectKind?: string;
  subjectId?: string;
  /** At or after this instant. */
  from?: string;
  /** Before this instant. */
  to?: string;
  /** Only entries older than this one (the cursor). */
  beforeSeq?: number;
  limit: number;
}
