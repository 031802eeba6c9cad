/**
 * The storage interface. Every backend implements it with portable
 * SQL; nothing outside `lib/store/` knows which one is in use.
 */

import "server-only";
import type { ProblemBody, QuotaResource } from "../errors";
import type { RunDraft } from "../domain/drafts";
import type { KeyLimits } from "../domain/limits";
import type { AttachmentMeta, CallbackSpec, DecodingMode, RunOperation, RunStatus } from "../domain/runs";
import type { TransferTable } from "./migrations";
import type { RunListBounds, RunListPage, ThreadInfo, ThreadPageMessage, ThreadPageQuery } from "./pages";

export type { RunListBounds, RunListItem, RunListPage, ThreadInfo, ThreadPageMessage, ThreadPageQuery } from "./pages";

export type { TransferTable };

/** One stored row as plain JSON values (booleans as either 0/1 or true/false, whichever backend wrote it). */
export type TransferRow = Record<string, string | number | boolean | null>;

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** SHA-256 of the key, hex. The key itself is never stored. */
  hash: string;
  /** First characters of the key, to recognise it in listings. */
  prefix: string;
  admin: boolean;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** Signs this key's callback events (Standard Webhooks, `whsec_...`). */
  webhookSecret: string;
  limits: KeyLimits;
}

/** A reservation a run makes on one of its key's meters (lib/keys/limits.ts names them). */
export interface MeterCharge {
  meter: string;
  amount: number;
  /** The most `used + reserved` may reach. */
  limit: number;
}

/** A meter as a reservation found it: `amount` is what the run asked for. */
export interface MeterState {
  meter: string;
  used: number;
  reserved: number;
  limit: number;
  amount: number;
}

/** All of a run's charges reserved (states after them), or none, with the first that did not fit (states before). */
export type Admission = { ok: true; states: MeterState[] } | { ok: false; refused: MeterState; states: MeterState[] };

/**
 * What a run's reservations settle to when it ends, by meter kind (the part of the meter's name
 * before ":"); a kind left out settles to 0. "reserved": charge what was reserved (the run's real
 * use is unknown: its process died).
 */
export type Settlement = Partial<Record<string, number>> | "reserved";

export interface RunRecord {
  id: string;
  operation: RunOperation;
  workflowSlug: string;
  keyId: string;
  status: RunStatus;
  input: string;
  schema: unknown | null;
  contextSlugs: string[];
  /** For contexts too large for the model's window: the ids of the chunks the run used. */
  contextChunks: string[];
  /** What the run used, to reproduce and compare it: "config" or the API version number. */
  workflowVersion: string | null;
  /** The label the caller named (`slug@staging`), or `production` when a plain slug resolved through it; null otherwise. */
  workflowLabel: string | null;
  contextVersions: Record<string, string>;
  promptHash: string | null;
  schemaHash: string | null;
  attachments: AttachmentMeta[];
  callback: CallbackSpec | null;
  output: unknown | null;
  error: ProblemBody | null;
  modelName: string | null;
  modelTag: string | null;
  /** How the output was held to the schema; null before the run finishes. */
  decoding: DecodingMode | null;
  /** What the run tolerated or fell back from, for the caller to know (empty when nothing). */
  warnings: string[];
  /** The prompt in the model's own tokens, when the engine could count them before the run (local models). */
  promptTokens: number | null;
  /** The most tokens the output was allowed: the workflow's limit, cut to what the context window left. */
  outputTokenLimit: number | null;
  inputTokens: number;
  outputTokens: number;
  cost: string;
  durationMs: number | null;
  attempts: number;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
  /** The run's span as a W3C traceparent (its trace id: the caller's trace, or a new one); null without tracing or an incoming trace. */
  traceparent: string | null;
  /** The test-suite evaluation the run was made for (a case or a judge run); null for others. */
  evaluationId: string | null;
  /** For streamed output: how it arrived, as [milliseconds since the run began, characters so far] pairs (null: not recorded). */
  pace: [number, number][] | null;
  /** A draft run's record: the version it started from, the definition that ran and what differs; null for other runs. */
  draft: RunDraft | null;
}

export type NewRun = Pick<RunRecord, "id" | "operation" | "workflowSlug" | "keyId" | "input" | "schema" | "contextSlugs" | "attachments" | "callback" | "modelTag" | "createdAt"> & {
  contextChunks?: string[];
  workflowVersion?: string;
  workflowLabel?: string | null;
  draft?: RunDraft | null;
  contextVersions?: Record<string, string>;
  promptHash?: string;
  schemaHash?: string;
  promptTokens?: number;
  outputTokenLimit?: number;
  /** "queued" for an asynchronous run, whose request is kept until it finishes. */
  status?: "queued" | "running";
  request?: unknown;
  /** For a running run: the process executing it, and until when (renewed while it runs). */
  lease?: Lease;
  traceparent?: string | null;
  evaluationId?: string | null;
};

export interface IdempotencyRecord {
  requestHash: string;
  state: "in_progress" | "done";
  runId: string | null;
  responseStatus: number | null;
  responseBody: string | null;
  createdAt: string;
}

export type RunOutcome = Pick<RunRecord, "status" | "output" | "error" | "modelName" | "modelTag" | "decoding" | "warnings" | "inputTokens" | "outputTokens" | "cost" | "durationMs" | "attempts" | "finishedAt"> & { pace?: [number, number][] | null };

export interface RunFilter {
  /** Only runs of this key; undefined lists every key's runs (admin). */
  keyId?: string;
  workflowSlug?: string;
  status?: RunStatus;
  operation?: RunOperation;
  /** Only the runs of this evaluation. */
  evaluationId?: string;
  /** Runs with an id lower than this one (ids sort by creation time). */
  beforeId?: string;
  /** Runs with an id at or above this one: created at or after a time (`runIdAt`). */
  fromId?: string;
  /** Runs whose input contains this text, ignoring case (ASCII), or whose id it is (within `RunListBounds`). */
  search?: string;
  limit: number;
}

export interface ThreadRecord {
  id: string;
  keyId: string;
  workflowSlug: string;
  createdAt: string;
  updatedAt: string;
}

export interface ThreadMessage {
  role: "user" | "assistant";
  content: string;
  runId: string | null;
  createdAt: string;
}

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

export type CatalogKind = "workflow" | "context";

/** One immutable version of a workflow or context managed through the API (body null: deleted). */
export interface CatalogVersion {
  kind: CatalogKind;
  slug: string;
  version: number;
  body: Record<string, unknown> | null;
  keyId: string | null;
  createdAt: string;
}

/**
 * One change of a workflow label: moved to a version, removed, or a promotion its suite refused.
 * The label's current version is its newest `moved` (or `removed`) entry.
 */
export interface LabelMove {
  seq: number;
  slug: string;
  label: string;
  outcome: "moved" | "removed" | "refused";
  /** The version moved to (or that a refused promotion targeted); null when removed. */
  version: string | null;
  /** Where the label pointed before. */
  previous: string | null;
  keyId: string;
  /** The evaluation that gated the move, and its pass rate. */
  evaluationId: string | null;
  passRate: number | null;
  createdAt: string;
}

/** A read-only link to a run or an evaluation report that needs no key; only the token's hash is stored. */
export interface ShareRecord {
  id: string;
  tokenHash: string;
  kind: "run" | "evaluation";
  targetId: string;
  keyId: string;
  /** JSON Pointers into the output masked on the shared page. */
  hideFields: string[];
  expiresAt: string | null;
  revokedAt: string | null;
  createdAt: string;
}

/** Work held by one process until a time: a run it executes, an event it delivers. */
export interface Lease {
  /** The process (replica) holding it. */
  owner: string;
  until: string;
}

/** A stored run that was left `running` and is now claimed for reconciliation. */
export type StrandedRun = RunRecord & { request: unknown | null; asyncStarts: number };

/** One event of a streamed run as stored for other processes: `event` is its JSON. */
export interface StoredStreamEvent {
  seq: number;
  event: string;
  final: boolean;
}

/** A test suite managed through the API (`document` as it was put, shape-checked by the caller). */
export interface SuiteRecord {
  slug: string;
  /** The key that created it (it and admin keys may change it). */
  keyId: string;
  /** 1 when created, +1 on every change. */
  version: number;
  document: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export type EvaluationStatus = "queued" | "running" | "completed" | "cancelled" | "failed";

/**
 * A suite's document as evaluations ran it: stored once per suite, version and document, and
 * shared by every evaluation of that version (immutable; kept when the suite changes or goes).
 */
export interface SuiteSnapshot {
  id: string;
  suiteSlug: string;
  suiteVersion: number;
  document: Record<string, unknown>;
  createdAt: string;
}

/** One evaluation of a suite: the suite as it was when it started, what it ran against, and its outcome. */
export interface EvaluationRecord {
  id: string;
  suiteSlug: string;
  suiteVersion: number;
  keyId: string;
  status: EvaluationStatus;
  /** What the cases ran against (workflow, model, repeats, baseline, callback), as JSON. */
  target: Record<string, unknown>;
  /** The suite document as it was when the evaluation was created (`evaluations.snapshot`). */
  snapshotId: string;
  /** Totals written when it ended. */
  summary: unknown | null;
  error: ProblemBody | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export type NewEvaluation = Omit<EvaluationRecord, "status" | "summary" | "error" | "startedAt" | "finishedAt">;

/** The result of one case run (one repeat of one case). */
export interface EvaluationItemRecord {
  /** Order of recording (an SSE follower resumes after it). */
  seq: number;
  caseIndex: number;
  repeat: number;
  runId: string | null;
  /** passed: the run succeeded and every expectation held; failed: one did not; error: the run failed. */
  status: "passed" | "failed" | "error";
  output: unknown | null;
  checks: unknown[];
  error: ProblemBody | null;
  durationMs: number | null;
  inputTokens: number;
  outputTokens: number;
  cost: string;
  createdAt: string;
}

export interface EvaluationFilter {
  suiteSlug?: string;
  /** Only this key's; undefined: every key's (admin). */
  keyId?: string;
  status?: EvaluationStatus;
  /** Evaluations with an id lower than this one (ids sort by creation time). */
  beforeId?: string;
  limit: number;
}

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
    list(): Promise<ApiKeyRecord[]>;
    /** Returns false when no active key has that id. */
    revoke(id: string, at: string): Promise<boolean>;
    touch(id: string, at: string): Promise<void>;
    secrets(id: string): Promise<WebhookSecrets | null>;
    /** Sets a new signing secret; the old one keeps signing until `previousUntil`. */
    rotateSecret(id: string, secret: string, previousUntil: string): Promise<boolean>;
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
  catalog: {
    /** The newest version of every slug of a kind (deleted ones included, with a null body). */
    latest(kind: CatalogKind): Promise<CatalogVersion[]>;
    get(kind: CatalogKind, slug: string): Promise<CatalogVersion | null>;
    /** Appends a version (a null body deletes); returns it. */
    append(kind: CatalogKind, slug: string, body: Record<string, unknown> | null, keyId: string, at: string): Promise<CatalogVersion>;
    /** One version of a slug (null when it never existed). */
    version(kind: CatalogKind, slug: string, version: number): Promise<CatalogVersion | null>;
    /** Every version of a slug, oldest first. */
    versions(kind: CatalogKind, slug: string): Promise<CatalogVersion[]>;
    /**
     * The newest version of a workflow (deleted: a null body) and where one of its labels points
     * (null: never set, or removed), in one statement: what resolving a plain slug needs.
     */
    latestWithLabel(slug: string, label: string): Promise<{ latest: CatalogVersion; labelled: string | null } | null>;
  };
  labels: {
    /** Each label of the workflow as its newest move left it (removed labels left out). */
    current(slug: string): Promise<LabelMove[]>;
    /** Where one label points now (null: never set, or removed). */
    get(slug: string, label: string): Promise<LabelMove | null>;
    /**
     * Records a change of a label, its `previous` read in the same statement. With an evaluation id
     * it is recorded at most once per evaluation (a promotion decided again after a crash): null then.
     */
    record(move: Omit<LabelMove, "seq" | "previous">): Promise<LabelMove | null>;
    history(slug: string): Promise<LabelMove[]>;
  };
  shares: {
    /** With `limit`: only while the key holds fewer links that still work (else `quota_exceeded`). */
    create(share: ShareRecord, limit?: number): Promise<void>;
    get(id: string): Promise<ShareRecord | null>;
    byToken(tokenHash: string): Promise<ShareRecord | null>;
    /** Newest first; every key's when `keyId` is undefined. */
    list(keyId: string | undefined): Promise<ShareRecord[]>;
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
    list(keyId?: string): Promise<SuiteRecord[]>;
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
  /** What the metrics read when scraped: backlogs, and the connection pool where there is one. */
  stats(): Promise<{ pendingEvents: number; queuedRuns: number }>;
  pool(): { total: number; idle: number; waiting: number; max: number } | null;
  /** Applies pending migrations (once, whoever else starts at the same time). */
  migrate(): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** GET /api/v1/usage: finished runs created in [from, to), of one key (or all: null). */
export interface UsageQuery {
  from: string;
  to: string;
  keyId: string | null;
  groupBy: "workflow" | "model" | "key";
  bucket: "hour" | "day";
}

export interface UsageReport {
  from: string;
  to: string;
  groupBy: UsageQuery["groupBy"];
  bucket: UsageQuery["bucket"];
  groups: {
    group: string;
    runs: number;
    errors: number;
    inputTokens: number;
    outputTokens: number;
    costUsd: string;
    durationMsP50: number | null;
    durationMsP95: number | null;
  }[];
  series: { at: string; runs: number; errors: number; costUsd: string }[];
}
