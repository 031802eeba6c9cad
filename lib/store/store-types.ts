/**
 * The storage interface. Every backend implements it with portable
 * SQL; nothing outside `lib/store/` knows which one is in use. The records each sub-store reads and
 * writes are in key-types.ts, run-types.ts, event-types.ts, catalog-types.ts, evaluation-types.ts and
 * usage-types.ts, and exported from here as well.
 */

import "server-only";
import type { ProblemBody, QuotaResource } from "../errors";
import type { KeyLimits } from "../domain/key-limits";
import type { TransferTable } from "./migrations";
import type { RunListBounds, RunListPage, ThreadInfo, ThreadPageMessage, ThreadPageQuery } from "./pages";

export type { RunListBounds, RunListItem, RunListPage, ThreadInfo, ThreadPageMessage, ThreadPageQuery } from "./pages";

export type { TransferTable };

import type { Admission, ApiKeyRecord, MeterCharge, MeterState, OwnerScope, ProjectRecord, Settlement } from "./key-types";
export type { Admission, ApiKeyRecord, MeterCharge, MeterState, OwnerScope, ProjectRecord, Settlement } from "./key-types";
import type { IdempotencyRecord, Lease, NewRun, RunFilter, RunOutcome, RunRecord, StoredStreamEvent, StrandedRun, ThreadMessage, ThreadRecord } from "./run-types";
export type { IdempotencyRecord, Lease, NewRun, RunFilter, RunHistory, RunOutcome, RunRecord, StoredStreamEvent, StrandedRun, ThreadMessage, ThreadRecord } from "./run-types";
import type { DeliveryAttempt, EventRecord, InboxBounds, InboxEvent, InboxPage, InboxRecord, NewEvent, StoredInboxEvent, WebhookSecrets } from "./event-types";
export type { DeliveryAttempt, EventRecord, InboxBounds, InboxEvent, InboxPage, InboxRecord, NewEvent, StoredInboxEvent, WebhookSecrets } from "./event-types";
import type { CatalogKind, CatalogVersion, LabelMove, ShareRecord } from "./catalog-types";
export type { CatalogKind, CatalogVersion, LabelMove, ShareRecord } from "./catalog-types";
import type { EvaluationFilter, EvaluationItemRecord, EvaluationRecord, EvaluationStatus, NewEvaluation, SuiteRecord, SuiteSnapshot } from "./evaluation-types";
export type { EvaluationFilter, EvaluationItemRecord, EvaluationRecord, EvaluationStatus, NewEvaluation, SuiteRecord, SuiteSnapshot } from "./evaluation-types";
import type { AuditEntry, AuditEvent, AuditFilter } from "./audit-types";
export type { AuditActor, AuditEntry, AuditEvent, AuditFilter } from "./audit-types";
import type { UsageQuery, UsageReport } from "./usage-types";
import type { MembersStore, PeopleStore } from "./people-types";
export type { InviteRecord, MemberRecord, MembersStore, MembershipRecord, PeopleStore, PendingLogin, SessionRecord, UserRecord } from "./people-types";
export type { UsageQuery, UsageReport } from "./usage-types";

/** One stored row as plain JSON values (booleans as either 0/1 or true/false, whichever backend wrote it). */
export type TransferRow = Record<string, string | number | boolean | null>;

export interface Store {
  readonly kind: "sqlite" | "postgres";
  keys: {
    insert(key: ApiKeyRecord): Promise<void>;
    /** Inserts the key only if no key was ever created (the first admin key: once, however many processes start together). */
    insertFirst(key: ApiKeyRecord): Promise<boolean>;
    /** Changes a key's name or limits; false when no key has that id. */
    update(id: string, patch: { name?: string; limits?: Partial<KeyLimits> }): Promise<boolean>;
    /** The key's meters as they stand (absent ones: nothing used). */
    meters(id: string, meters: readonly string[]): Promise<{ meter: string; used: number; reserved: number }[]>;
    findByHash(hash: string): Promise<ApiKeyRecord | null>;
    get(id: string): Promise<ApiKeyRecord | null>;
    /** Every key, or only one project's. */
    list(projectId?: string): Promise<ApiKeyRecord[]>;
    /** Returns false when no active key has that id. */
    revoke(id: string, at: string): Promise<boolean>;
    touch(id: string, at: string): Promise<void>;
    secrets(id: string): Promise<WebhookSecrets | null>;
    /** Sets a new signing secret; the old one keeps signing until `previousUntil`. */
    rotateSecret(id: string, secret: string, previousUntil: string): Promise<boolean>;
  };
  projects: {
    /** Refuses a taken slug (409 `conflict`). */
    insert(project: ProjectRecord): Promise<void>;
    get(id: string): Promise<ProjectRecord | null>;
    bySlug(slug: string): Promise<ProjectRecord | null>;
    list(): Promise<ProjectRecord[]>;
    rename(id: string, name: string): Promise<boolean>;
  };
  runs: {
    /**
     * Stores a run, reserving `charges` on its key's meters in the same transaction: both, or
     * neither when a charge does not fit its limit.
     */
    insert(run: NewRun, charges?: readonly MeterCharge[]): Promise<Admission>;
    /** Reserves more for a run in progress (a retry's cost), all or nothing. */
    reserve(runId: string, keyId: string, charges: readonly MeterCharge[], at: string): Promise<Admission>;
    /**
     * Records the outcome and, in the same transaction, queues the run's callback event (outbox) —
     * only while the run is unfinished and, with `owner`, still leased to that process. False when
     * it was not (another process reconciled it, or it had ended): nothing is written then.
     */
    finish(id: string, outcome: RunOutcome, event?: NewEvent, owner?: string, settle?: Settlement): Promise<boolean>;
    get(id: string): Promise<RunRecord | null>;
    /** Newest first, as previews; a search reads at most `bounds.searchBytes` of inputs per call. */
    list(filter: RunFilter, bounds: RunListBounds): Promise<RunListPage>;
    /** Extends the leases of runs `owner` executes (a heartbeat). */
    renewLeases(owner: string, ids: readonly string[], until: string): Promise<void>;
    /**
     * Runs left `running` whose lease ran out by `now` (the process executing them died), claimed
     * for the caller under `lease` — each by one caller however many ask at once — oldest first.
     */
    claimStranded(now: string, lease: Lease, limit: number): Promise<StrandedRun[]>;
    /** Queues a claimed stranded asynchronous run again (its concurrency slot is freed). */
    requeue(id: string, at: string): Promise<void>;
    /**
     * Takes a queued run whose key has a free concurrency slot, keys taking turns — the key with the
     * fewest runs running first, then the key served longest ago, then that key's oldest run —
     * reserves the slot and marks the run running under `lease` (each by one caller); null when
     * there is none.
     */
    claimQueued(at: string, lease: Lease): Promise<(RunRecord & { request: unknown }) | null>;
    /** How many runs the key has queued, counted up to `atMost`. */
    queuedCount(keyId: string, atMost: number): Promise<number>;
    /**
     * Records that the run is to be cancelled (the first request's time stands) and tells every
     * listening process (`listenCancels`); false when the run has ended or does not exist.
     */
    requestCancel(id: string, at: string): Promise<boolean>;
    /** Of these runs, those still running whose cancel was requested (a heartbeat's check). */
    cancelRequested(ids: readonly string[]): Promise<string[]>;
    /**
     * Calls `onCancel(runId)` whenever any process requests a run's cancel; `onReconnect` after the
     * notification channel was lost and is back (requests meanwhile went unannounced).
     */
    listenCancels(onCancel: (runId: string) => void, onReconnect: () => void): Promise<{ close(): Promise<void> }>;
  };
  events: {
    /** Pending events whose next attempt is due, oldest first (whoever holds them). */
    due(now: string, limit: number): Promise<EventRecord[]>;
    /** Due events nobody holds, claimed under `lease` until their attempt is recorded (each by one caller). */
    claimDue(now: string, limit: number, lease: Lease): Promise<EventRecord[]>;
    /** Frees every event's lease (at the start of a process that owns the store alone: the holders are gone). */
    releaseLeases(): Promise<void>;
    forRun(runId: string): Promise<(EventRecord & { deliveries: DeliveryAttempt[] }) | null>;
    /**
     * Logs an attempt and moves the event on (pending with a next attempt, delivered, or dead) —
     * only while it is still held under `heldUntil`, the lease the attempt was made under: a
     * redelivery asked for meanwhile (which frees the lease) or another holder's claim after the
     * lease ran out is not overwritten.
     */
    recordAttempt(eventId: string, attempt: DeliveryAttempt, status: EventRecord["status"], heldUntil: string | null): Promise<void>;
    /** Makes an event due again now (same id, so receivers can deduplicate). */
    redeliver(eventId: string, at: string): Promise<void>;
  };
  inboxes: {
    /** With `limit`: only while the key holds fewer inboxes (else `quota_exceeded`). */
    create(inbox: InboxRecord, limit?: number): Promise<void>;
    get(id: string): Promise<InboxRecord | null>;
    /** Stores a received event and, in the same transaction, drops what `bounds` no longer keeps. */
    receive(id: string, event: InboxEvent, bounds: InboxBounds): Promise<void>;
    /** A page of the inbox's deliveries, newest first; `next`: the `before` of the page after it (null: none). */
    events(id: string, page: InboxPage): Promise<{ events: StoredInboxEvent[]; next: number | null }>;
  };
  /** Catalog entries and labels are named per project: each method's last argument is the project (the default project when left out). */
  catalog: {
    /** The newest version of every slug of a kind (deleted ones included, with a null body). */
    latest(kind: CatalogKind, projectId?: string): Promise<CatalogVersion[]>;
    get(kind: CatalogKind, slug: string, projectId?: string): Promise<CatalogVersion | null>;
    /** Appends a version (a null body deletes); returns it. */
    append(kind: CatalogKind, slug: string, body: Record<string, unknown> | null, keyId: string, at: string, projectId?: string): Promise<CatalogVersion>;
    /** One version of a slug (null when it never existed). */
    version(kind: CatalogKind, slug: string, version: number, projectId?: string): Promise<CatalogVersion | null>;
    /** Every version of a slug, oldest first. */
    versions(kind: CatalogKind, slug: string, projectId?: string): Promise<CatalogVersion[]>;
    /**
     * The newest version of a workflow (deleted: a null body) and where one of its labels points
     * (null: never set, or removed), in one statement: what resolving a plain slug needs.
     */
    latestWithLabel(slug: string, label: string, projectId?: string): Promise<{ latest: CatalogVersion; labelled: string | null } | null>;
  };
  labels: {
    /** Each label of the workflow as its newest move left it (removed labels left out). */
    current(slug: string, projectId?: string): Promise<LabelMove[]>;
    /** Where one label points now (null: never set, or removed). */
    get(slug: string, label: string, projectId?: string): Promise<LabelMove | null>;
    /**
     * Records a change of a label, its `previous` read in the same statement. With an evaluation id
     * it is recorded at most once per evaluation (a promotion decided again after a crash): null then.
     */
    record(move: Omit<LabelMove, "seq" | "previous">, projectId?: string): Promise<LabelMove | null>;
    history(slug: string, projectId?: string): Promise<LabelMove[]>;
  };
  shares: {
    /** With `limit`: only while the key holds fewer links that still work (else `quota_exceeded`). */
    create(share: ShareRecord, limit?: number): Promise<void>;
    get(id: string): Promise<ShareRecord | null>;
    byToken(tokenHash: string): Promise<ShareRecord | null>;
    /** Newest first; every key's when `keyId` is undefined. */
    list(scope: OwnerScope): Promise<ShareRecord[]>;
    revoke(id: string, at: string): Promise<boolean>;
  };
  idempotency: {
    /** Reserves the key for this request; returns the existing record (within `maxAgeMs`) when there is one. */
    begin(keyId: string, key: string, requestHash: string, at: string, maxAgeMs: number): Promise<IdempotencyRecord | null>;
    complete(keyId: string, key: string, result: { runId: string | null; status: number; body: string }): Promise<void>;
    /** Forgets a reservation whose request never started a run (it failed validation). */
    release(keyId: string, key: string): Promise<void>;
  };
  threads: {
    /** Creates the thread; false when this key already has one with that id. With `limit`: only while the key holds fewer (else `quota_exceeded`). */
    create(thread: ThreadRecord, limit?: number): Promise<boolean>;
    /** The thread with its message count and bytes (summed from an index, not the messages). */
    get(keyId: string, id: string): Promise<ThreadInfo | null>;
    /** One page of its messages in `order`; `more` when messages follow it. Never the whole thread. */
    page(keyId: string, id: string, query: ThreadPageQuery): Promise<{ messages: ThreadPageMessage[]; more: boolean }>;
    /** The newest messages whose bytes add up to at most `maxBytes`, oldest first: what a run may send as history. */
    history(keyId: string, id: string, maxBytes: number): Promise<ThreadMessage[]>;
    append(keyId: string, id: string, messages: ThreadMessage[], at: string): Promise<void>;
    /** Removes the thread and its messages; false when there was none. */
    delete(keyId: string, id: string): Promise<boolean>;
  };
  /** Streamed runs' events, for a client that resumes on another process than the one running the stream. */
  streams: {
    /** Appends events (in `seq` order, continuing the run's) and tells every listening process. */
    append(runId: string, events: readonly StoredStreamEvent[], at: string): Promise<void>;
    /** The run's events after `afterSeq`, in order, at most `limit`. */
    after(runId: string, afterSeq: number, limit: number): Promise<StoredStreamEvent[]>;
    /**
     * Calls `onAppended(runId)` whenever any process appends to a run; `onReconnect` after the
     * notification channel was lost and is back (appends meanwhile went unannounced).
     */
    listen(onAppended: (runId: string) => void, onReconnect: () => void): Promise<{ close(): Promise<void> }>;
    /** Forgets streams that ended before `endedBefore`, and any event older than `orphanedBefore`. */
    sweep(endedBefore: string, orphanedBefore: string): Promise<void>;
  };
  suites: {
    /** Creates the suite (version 1, owned by `keyId`) or replaces its document (version + 1, owner kept). */
    put(slug: string, keyId: string, document: Record<string, unknown>, at: string): Promise<{ suite: SuiteRecord; created: boolean }>;
    get(slug: string): Promise<SuiteRecord | null>;
    /** By slug; only `keyId`'s when given. */
    list(scope?: OwnerScope): Promise<SuiteRecord[]>;
    /** False when there was none. Its evaluations stay (with the snapshots of the suite they ran). */
    delete(slug: string): Promise<boolean>;
  };
  evaluations: {
    /**
     * Stores the suite's document for evaluations to run, once per suite, version and document: the
     * id of the copy already stored when there is one, else `snapshot.id`, stored now.
     */
    saveSnapshot(snapshot: SuiteSnapshot): Promise<string>;
    snapshot(id: string): Promise<SuiteSnapshot | null>;
    /**
     * Stores a queued evaluation — unless its key already has `maxQueued` queued (then false, and
     * nothing is stored). Atomic on SQLite; on PostgreSQL keys racing their own inserts may pass it
     * by the requests in flight.
     */
    insert(evaluation: NewEvaluation, options?: { maxQueued?: number }): Promise<boolean>;
    /** The evaluation's row (its status, target and outcome; the suite stays in its snapshot). */
    get(id: string): Promise<EvaluationRecord | null>;
    /** Newest first. */
    list(filter: EvaluationFilter): Promise<EvaluationRecord[]>;
    /**
     * Takes an evaluation that is queued, or running under a lease that ran out by `now` (its
     * process died), and marks it running under `lease` — each by one caller. Keys take turns: the
     * one with the fewest evaluations running (held by a live lease) goes first, then the one
     * whose evaluations were claimed longest ago (never: first), then the key's oldest evaluation.
     */
    claim(now: string, lease: Lease): Promise<EvaluationRecord | null>;
    /** Puts an evaluation `owner` holds back in the queue (its results stay); false when it no longer held it. */
    requeue(id: string, owner: string): Promise<boolean>;
    /** Whether an evaluation of another key than `keyId` is queued (waiting for a slot). */
    othersQueued(keyId: string): Promise<boolean>;
    /** Extends the leases `owner` holds on these evaluations; returns those still running under it (the others were cancelled or taken). */
    renewLeases(owner: string, ids: readonly string[], until: string): Promise<string[]>;
    /** Frees every evaluation's lease (at the start of a process that owns the store alone). */
    releaseLeases(): Promise<void>;
    /** Its case results in the order they were recorded, after `afterSeq`. */
    items(id: string, afterSeq?: number): Promise<EvaluationItemRecord[]>;
    /**
     * Records one case result, only while the evaluation runs under `owner`'s lease; false when it
     * does not (cancelled, or taken over). A result already recorded for the case and repeat stays.
     */
    recordItem(id: string, owner: string, item: Omit<EvaluationItemRecord, "seq">): Promise<boolean>;
    /** Cancels a queued or running evaluation; false when it had ended (or does not exist). */
    cancel(id: string, at: string): Promise<boolean>;
    /**
     * Ends a running evaluation held by `owner` with its summary, queueing its callback event first
     * (the event's id is derived from the evaluation's, so a finish repeated after a crash queues it once).
     */
    finish(id: string, owner: string, outcome: { status: "completed" | "failed"; summary: unknown; error: ProblemBody | null; finishedAt: string }, event?: Omit<EventRecord, "status" | "attempts">): Promise<boolean>;
    /** Ended evaluations that gate a promotion whose outcome no label move records yet (a process died in between). */
    undecidedPromotions(): Promise<EvaluationRecord[]>;
  };
  /** Moving all data between stores (`genserve export` / `import`), table by table. */
  transfer: {
    /** Every row of a table, in primary-key order. */
    rows(table: TransferTable): AsyncIterable<TransferRow>;
    /**
     * Writes rows from any backend's export in one transaction — all of them or none — into a
     * store that holds no keys or runs yet; numbering continues after the imported rows. Returns
     * the rows written per table.
     */
    load(rows: AsyncIterable<{ table: TransferTable; row: TransferRow }>): Promise<Record<string, number>>;
  };
  /** People, their sign-in identities and tokens, and browsers' sessions (lib/people/). */
  people: PeopleStore;
  /** The people of each project and invitations to join (lib/people/members.ts). */
  members: MembersStore;
  usage: {
    /** Runs, errors, tokens, cost and duration percentiles of finished runs, per group and over time. */
    report(query: UsageQuery): Promise<UsageReport>;
    /** Forgets meters named `prefix…` last changed before `before` with nothing reserved (windows that ended). */
    sweep(rules: readonly { prefix: string; before: string }[]): Promise<void>;
  };
  /** Per-key storage quotas: how many of each capped resource a key holds now (share links: those that still work at `at`). */
  quotas: {
    usage(keyId: string, at: string): Promise<Record<QuotaResource, number>>;
    /** How many of one resource the key holds now. */
    count(keyId: string, resource: QuotaResource, at: string): Promise<number>;
  };
  /** Who changed what, when and from where: appended after each change, kept when the subject is deleted. */
  audit: {
    append(entry: AuditEntry): Promise<void>;
    /** Newest first, at most `filter.limit`. */
    list(filter: AuditFilter): Promise<AuditEvent[]>;
  };
  /** What the metrics read when scraped: backlogs, and the connection pool where there is one. */
  stats(): Promise<{ pendingEvents: number; queuedRuns: number }>;
  pool(): { total: number; idle: number; waiting: number; max: number } | null;
  /** Applies pending migrations (once, whoever else starts at the same time). */
  migrate(): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

