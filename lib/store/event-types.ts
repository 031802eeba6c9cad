/** Callback events, their deliveries and built-in inboxes: the records of `Store["events"]` and `inboxes`. */

import "server-only";

/** A run's callback event in the outbox. `payload` is the exact body that is signed and sent. */
export interface EventRecord {
  id: string;
  runId: string;
  keyId: string;
  url: string;
  headers: Record<string, string>;
  payload: string;
  status: "pending" | "delivered" | "dead";
  attempts: number;
  nextAttemptAt: string | null;
  createdAt: string;
  /** The run's span: deliveries are traced as its children. */
  traceparent?: string | null;
}

/** An event as queued with the outcome it tells of; `leaseUntil`: already held by the process that delivers it at once. */
export type NewEvent = Omit<EventRecord, "status" | "attempts"> & { leaseUntil?: string | null };

export interface DeliveryAttempt {
  attemptedAt: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  nextAttemptAt: string | null;
}

export interface WebhookSecrets {
  current: string;
  /** The secret before the last rotation, still signing alongside until `previousUntil`. */
  previous: string | null;
  previousUntil: string | null;
}

export interface InboxRecord {
  id: string;
  keyId: string;
  host: string;
  createdAt: string;
}

export interface InboxEvent {
  receivedAt: string;
  headers: Record<string, string>;
  body: string;
  verified: boolean;
}

/** A delivery as stored: `seq` orders an inbox's deliveries (a page's cursor). */
export type StoredInboxEvent = InboxEvent & { seq: number };

/** What an inbox keeps: the newest `keep` deliveries, together at most `maxBytes` (bodies and headers), none older than `maxAgeMs`. */
export interface InboxBounds {
  keep: number;
  maxBytes: number;
  maxAgeMs: number;
}

/** One page of an inbox, newest first: at most `limit` deliveries of at most `maxBytes` together (at least one), older than `before`. */
export interface InboxPage {
  before?: number;
  limit: number;
  maxBytes: number;
}
