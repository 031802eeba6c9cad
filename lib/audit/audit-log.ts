import "server-only";
import type { AuditActor, AuditEntry, AuditEvent, AuditFilter, Store } from "../store/store-types";

/**
 * The audit log as the server writes it: one `record` after each change to keys, workflows and
 * their labels, contexts, suites and shares (the handlers that change them call it once the change
 * is stored). Entries are appended right after the change, not in its transaction: a process that
 * dies between the two loses the entry, but an entry never records a change that did not happen.
 *
 * Actions are stable dotted names (the page and API filters match their prefixes):
 * key.create · key.rename · key.limits · key.revoke · key.secret.rotate ·
 * workflow.version.create · workflow.delete · workflow.label.move · workflow.label.remove ·
 * workflow.label.promote (asked for) · workflow.label.refuse (its suite did not pass) · context.version.create · context.delete ·
 * suite.create · suite.update · suite.delete · share.create · share.revoke.
 */

/** Where a change came from: who, and from which address and client. */
export interface AuditOrigin {
  actor: AuditActor;
  ip: string | null;
  userAgent: string | null;
  /** The project the change belongs to (null until projects exist). */
  projectId: string | null;
}

/**
 * The actor a caller is recorded as — the one place that maps a caller to the log (people and
 * projects add their fields here).
 */
export function actorOf(principal: { keyId: string; name: string; userId?: string; via?: "key" | "session" }): AuditActor {
  // A person signed in acts through their personal key, named by their email.
  if (principal.via === "session" && principal.userId) return { kind: "person", id: principal.userId, label: principal.name };
  return { kind: "key", id: principal.keyId, label: principal.name };
}

/** Changes made on the host with the `genserve` command (it holds the data directory or database URL). */
export const CLI_ORIGIN: AuditOrigin = { actor: { kind: "system", id: null, label: "genserve CLI" }, ip: null, userAgent: null, projectId: null };

/** The first start of an empty store, which creates the first admin key. */
export const FIRST_START_ORIGIN: AuditOrigin = { actor: { kind: "system", id: null, label: "first start" }, ip: null, userAgent: null, projectId: null };

/** A promotion gated by a suite, decided by genserve when its evaluation ends. */
export const PROMOTION_ORIGIN: AuditOrigin = { actor: { kind: "system", id: null, label: "gated promotion" }, ip: null, userAgent: null, projectId: null };

/** Field names whose values are never written to the log, whatever the change (secrets, tokens, hashes). */
const SECRET_FIELD = /secret|password|token|hash|^key$/i;
export const REDACTED = "(redacted)";

/** The fields that differ between `before` and `after` (compared as JSON), each as before and after; secrets redacted. */
export function changesBetween(before: object | null, after: object | null): AuditEntry["changes"] {
  const changes: AuditEntry["changes"] = {};
  const was = before as Record<string, unknown> | null;
  const is = after as Record<string, unknown> | null;
  const names = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  for (const name of names) {
    const b = was?.[name];
    const a = is?.[name];
    if (JSON.stringify(b) === JSON.stringify(a)) continue;
    const secret = SECRET_FIELD.test(name);
    changes[name] = {
      ...(before !== null && b !== undefined && { before: secret ? REDACTED : b }),
      ...(after !== null && a !== undefined && { after: secret ? REDACTED : a }),
    };
  }
  return changes;
}

export class AuditLog {
  constructor(
    private readonly store: Store,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Appends one entry; `changes` as `changesBetween` makes them. */
  async record(origin: AuditOrigin, action: string, subject: { kind: string; id: string }, changes: AuditEntry["changes"] = {}): Promise<void> {
    await this.store.audit.append({ at: this.now().toISOString(), projectId: origin.projectId, actor: origin.actor, ip: origin.ip, userAgent: origin.userAgent, action, subject, changes });
  }

  list(filter: AuditFilter): Promise<AuditEvent[]> {
    return this.store.audit.list(filter);
  }
}
