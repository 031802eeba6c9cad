import "server-only";
import { EARLY_MIGRATIONS } from "./migrations-early";
/**
 * Versioned schema migrations, applied in order inside one transaction each. Append only: a
 * migration that has shipped is never edited. The SQL sticks to what SQLite and PostgreSQL share;
 * the one difference, auto-numbered `seq INTEGER PRIMARY KEY` columns, is translated for PostgreSQL
 * by `forPostgres`. Migrations 1 to 12 are in migrations-early.ts.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  ...EARLY_MIGRATIONS,
  {
    version: 13,
    name: "what a run tolerated or fell back from (a schema's draft mix, a grammar over its budget)",
    sql: `ALTER TABLE runs ADD COLUMN warnings_json TEXT;`,
  },
  {
    version: 14,
    name: "test suites, their evaluations (a snapshot of the suite each), and each case run's result",
    sql: `
      CREATE TABLE suites (
        slug TEXT PRIMARY KEY,
        key_id TEXT NOT NULL REFERENCES api_keys(id),
        version INTEGER NOT NULL,
        document TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE evaluations (
        id TEXT PRIMARY KEY,
        suite_slug TEXT NOT NULL,
        suite_version INTEGER NOT NULL,
        key_id TEXT NOT NULL REFERENCES api_keys(id),
        status TEXT NOT NULL,
        target_json TEXT NOT NULL,
        document TEXT NOT NULL,
        summary_json TEXT,
        error_json TEXT,
        created_at TEXT NOT NULL,
        started_at TEXT,
        finished_at TEXT,
        lease_owner TEXT,
        lease_until TEXT
      );
      CREATE INDEX evaluations_suite ON evaluations (suite_slug, id);
      CREATE INDEX evaluations_status ON evaluations (status, lease_until);
      CREATE TABLE evaluation_items (
        seq INTEGER PRIMARY KEY,
        evaluation_id TEXT NOT NULL REFERENCES evaluations(id),
        case_index INTEGER NOT NULL,
        repeat_index INTEGER NOT NULL,
        run_id TEXT,
        status TEXT NOT NULL,
        output_json TEXT,
        checks_json TEXT NOT NULL,
        error_json TEXT,
        duration_ms INTEGER,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cost TEXT NOT NULL DEFAULT '0',
        created_at TEXT NOT NULL
      );
      CREATE UNIQUE INDEX evaluation_items_case ON evaluation_items (evaluation_id, case_index, repeat_index);
    `,
  },
  {
    version: 15,
    name: "the evaluation a run was made for (its case runs are ordinary runs, linked to it)",
    sql: `
      ALTER TABLE runs ADD COLUMN evaluation_id TEXT;
      CREATE INDEX runs_evaluation ON runs (evaluation_id, id);
    `,
  },
  {
    version: 16,
    name: "workflow labels and their history, share links, and what each run resolved and how its stream was paced",
    sql: `
      CREATE TABLE workflow_label_moves (
        seq INTEGER PRIMARY KEY,
        slug TEXT NOT NULL,
        label TEXT NOT NULL,
        outcome TEXT NOT NULL,
        version TEXT,
        previous TEXT,
        key_id TEXT NOT NULL,
        evaluation_id TEXT,
        pass_rate DOUBLE PRECISION,
        created_at TEXT NOT NULL
      );
      CREATE INDEX workflow_label_moves_slug ON workflow_label_moves (slug, label, seq);
      CREATE UNIQUE INDEX workflow_label_moves_evaluation ON workflow_label_moves (evaluation_id);
      CREATE TABLE shares (
        id TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        target_id TEXT NOT NULL,
        key_id TEXT NOT NULL,
        hide_fields TEXT NOT NULL,
        expires_at TEXT,
        revoked_at TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX shares_key ON shares (key_id, id);
      ALTER TABLE runs ADD COLUMN workflow_label TEXT;
      ALTER TABLE runs ADD COLUMN pace TEXT;
    `,
  },
  {
    version: 17,
    name: "indexes on runs and events hold only the rows their queries look for (queued runs, running runs, runs of an evaluation, pending events): every run wrote and rewrote entries it was never found by",
    sql: `
      DROP INDEX runs_status;
      DROP INDEX runs_running_lease;
      CREATE INDEX runs_queued ON runs (id) WHERE status = 'queued';
      CREATE INDEX runs_running ON runs (id) WHERE status = 'running';
      DROP INDEX runs_evaluation;
      CREATE INDEX runs_evaluation ON runs (evaluation_id, id) WHERE evaluation_id IS NOT NULL;
      DROP INDEX events_due;
      CREATE INDEX events_due ON events (next_attempt_at, id) WHERE status = 'pending';
    `,
  },
  {
    version: 18,
    name: "thread messages carry their size, in an index beside their order: a thread's size, a page of it and a run's history are measured without reading the messages",
    // octet_length: UTF-8 bytes on both (SQLite 3.43+, PostgreSQL). The index covers (seq, bytes),
    // so sizes are summed from it alone, never from rows whose content spills onto overflow pages.
    sql: `
      ALTER TABLE thread_messages ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
      UPDATE thread_messages SET bytes = octet_length(content);
      DROP INDEX thread_messages_thread;
      CREATE INDEX thread_messages_thread ON thread_messages (key_id, thread_id, seq, bytes);
    `,
  },
  {
    version: 19,
    name: "evaluations share one stored copy of each suite version they ran (suite_snapshots) instead of a copy each; when each was last claimed (fair shares between keys)",
    // Every distinct (suite, version, document) becomes one snapshot, named after the first
    // evaluation that held it; each evaluation then points at its snapshot and its own copy goes.
    sql: `
      CREATE TABLE suite_snapshots (
        id TEXT PRIMARY KEY,
        suite_slug TEXT NOT NULL,
        suite_version INTEGER NOT NULL,
        document TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      INSERT INTO suite_snapshots (id, suite_slug, suite_version, document, created_at)
        SELECT 'snap_' || MIN(id), suite_slug, suite_version, document, MIN(created_at) FROM evaluations GROUP BY suite_slug, suite_version, document;
      CREATE INDEX suite_snapshots_version ON suite_snapshots (suite_slug, suite_version);
      ALTER TABLE evaluations ADD COLUMN snapshot_id TEXT;
      UPDATE evaluations SET snapshot_id = (
        SELECT s.id FROM suite_snapshots s
        WHERE s.suite_slug = evaluations.suite_slug AND s.suite_version = evaluations.suite_version AND s.document = evaluations.document
      );
      ALTER TABLE evaluations DROP COLUMN document;
      ALTER TABLE evaluations ADD COLUMN claimed_at TEXT;
      UPDATE evaluations SET claimed_at = started_at;
      CREATE INDEX evaluations_key ON evaluations (key_id, claimed_at);
    `,
  },
  {
    version: 20,
    name: "storage quotas counted per key, inbox deliveries' sizes, and a row readiness writes to see whether the store takes writes",
    sql: `
      CREATE INDEX inboxes_key ON inboxes (key_id);
      CREATE INDEX suites_key ON suites (key_id);
      ALTER TABLE inbox_events ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
      UPDATE inbox_events SET bytes = octet_length(body) + octet_length(headers);
      CREATE TABLE storage_probe (id INTEGER PRIMARY KEY, at TEXT NOT NULL, pad TEXT NOT NULL);
    `,
  },
  {
    version: 21,
    name: "queued asynchronous runs taken in turns by key: each key's oldest queued run found from an index, and when the key was last served",
    sql: `
      CREATE INDEX runs_queued_key ON runs (key_id, id) WHERE status = 'queued';
      ALTER TABLE api_keys ADD COLUMN queue_served_at TEXT;
    `,
  },
  {
    version: 22,
    name: "draft runs: the definition a run of an unsaved draft ran (its base version, the definition, what differs), as JSON",
    sql: `
      ALTER TABLE runs ADD COLUMN draft TEXT;
    `,
  },
  {
    version: 23,
    name: "run cancellation: when a cancel was asked for (POST /runs/{id}/cancel), seen by whichever process executes the run",
    sql: `
      ALTER TABLE runs ADD COLUMN cancel_requested_at TEXT;
    `,
  },
  {
    version: 24,
    name: "people: users, their sign-in identities and tokens, server-side sessions, and the personal key a user acts through",
    sql: `
      ALTER TABLE api_keys ADD COLUMN user_id TEXT;
      CREATE INDEX api_keys_user ON api_keys (user_id);
      CREATE TABLE users (
        id TEXT PRIMARY KEY,
        email TEXT NOT NULL UNIQUE,
        name TEXT,
        password_hash TEXT,
        created_at TEXT NOT NULL,
        disabled_at TEXT
      );
      CREATE TABLE user_identities (
        issuer TEXT NOT NULL,
        subject TEXT NOT NULL,
        user_id TEXT NOT NULL REFERENCES users(id),
        created_at TEXT NOT NULL,
        PRIMARY KEY (issuer, subject)
      );
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        user_id TEXT REFERENCES users(id),
        key_id TEXT NOT NULL REFERENCES api_keys(id),
        csrf_token TEXT NOT NULL,
        created_at TEXT NOT NULL,
        last_seen_at TEXT NOT NULL,
        idle_expires_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        revoked_at TEXT,
        ip TEXT,
        user_agent TEXT
      );
      CREATE INDEX sessions_user ON sessions (user_id);
      CREATE INDEX sessions_key ON sessions (key_id);
      CREATE TABLE sign_in_tokens (
        hash TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id),
        purpose TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        used_at TEXT
      );
      CREATE TABLE sign_in_logins (
        id TEXT PRIMARY KEY,
        verifier TEXT NOT NULL,
        nonce TEXT NOT NULL,
        return_to TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      );
      CREATE TABLE sign_in_failures (
        subject TEXT NOT NULL,
        window_start TEXT NOT NULL,
        failures INTEGER NOT NULL,
        PRIMARY KEY (subject, window_start)
      );
    `,
  },
  {
    version: 25,
    name: "projects: every key belongs to one project with a role (viewer, editor, admin); workflows and contexts as stored, and their labels, are a project's own; what existed moves to the default project",
    // Runs, threads, suites, evaluations, shares, inboxes and usage belong to their key, and a key
    // never changes project: their project is their key's (api_keys.project_id), one source of truth
    // instead of a copy on each row. Catalog entries are named per project (their rows have no key
    // when deleted through the configuration), so they carry their own project_id and their key grows it.
    // The default project is as old as the first key (a literal date: SQLite and PostgreSQL agree on it).
    sql: `
      CREATE TABLE projects (
        id TEXT PRIMARY KEY,
        slug TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      INSERT INTO projects (id, slug, name, created_at)
        SELECT 'prj_default', 'default', 'Default', COALESCE(MIN(created_at), '1970-01-01T00:00:00.000Z') FROM api_keys;
      ALTER TABLE api_keys ADD COLUMN project_id TEXT NOT NULL DEFAULT 'prj_default';
      ALTER TABLE api_keys ADD COLUMN role TEXT NOT NULL DEFAULT 'editor';
      UPDATE api_keys SET role = 'admin' WHERE admin = TRUE;
      CREATE INDEX api_keys_project ON api_keys (project_id, id);
      CREATE TABLE catalog_versions_25 (
        project_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        slug TEXT NOT NULL,
        version INTEGER NOT NULL,
        body TEXT,
        key_id TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (project_id, kind, slug, version)
      );
      INSERT INTO catalog_versions_25 (project_id, kind, slug, version, body, key_id, created_at)
        SELECT 'prj_default', kind, slug, version, body, key_id, created_at FROM catalog_versions;
      DROP TABLE catalog_versions;
      ALTER TABLE catalog_versions_25 RENAME TO catalog_versions;
      ALTER TABLE workflow_label_moves ADD COLUMN project_id TEXT NOT NULL DEFAULT 'prj_default';
      DROP INDEX workflow_label_moves_slug;
      CREATE INDEX workflow_label_moves_slug ON workflow_label_moves (project_id, slug, label, seq);
    `,
  },
  {
    version: 26,
    name: "the audit log: who changed what, when and from where; no foreign keys, so an entry outlives its subject",
    sql: `
      CREATE TABLE audit_events (
        seq INTEGER PRIMARY KEY,
        at TEXT NOT NULL,
        project_id TEXT,
        actor_kind TEXT NOT NULL,
        actor_id TEXT,
        actor_label TEXT NOT NULL,
        ip TEXT,
        user_agent TEXT,
        action TEXT NOT NULL,
        subject_kind TEXT NOT NULL,
        subject_id TEXT NOT NULL,
        changes TEXT NOT NULL
      );
      CREATE INDEX audit_events_at ON audit_events (at, seq);
      CREATE INDEX audit_events_subject ON audit_events (subject_kind, subject_id, seq);
      CREATE INDEX audit_events_actor ON audit_events (actor_id, seq);
    `,
  },
  {
    version: 27,
    name: "source grounding: where each value of an object run's output was found in its input and attachments (requested with grounding: true), as JSON",
    sql: `
      ALTER TABLE runs ADD COLUMN grounding_json TEXT;
    `,
  },
  {
    version: 28,
    name: "a run's own history: the earlier messages its request gave (OpenAI's chat completions, a suite case's), as JSON, so that it is shown and replayed",
    sql: `
      ALTER TABLE runs ADD COLUMN history TEXT;
    `,
  },
  {
    version: 29,
    name: "invites: a project's admins invite a person by email with a role; a one-time link (its token stored hashed) that expires",
    sql: `
      CREATE TABLE invites (
        id TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        project_id TEXT NOT NULL REFERENCES projects(id),
        email TEXT NOT NULL,
        role TEXT NOT NULL,
        created_by TEXT,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        accepted_at TEXT,
        revoked_at TEXT
      );
      CREATE INDEX invites_project ON invites (project_id, created_at);
    `,
  },
];

/**
 * The tables `genserve export` writes and `genserve import` reads, parents before children. Stream
 * events are left out: they are kept minutes, for clients resuming a stream.
 */
export const TRANSFER_TABLES = [
  "users",
  "user_identities",
  "projects",
  "api_keys",
  "invites",
  "catalog_versions",
  "threads",
  "thread_messages",
  "runs",
  "events",
  "deliveries",
  "inboxes",
  "inbox_events",
  "idempotency_keys",
  "key_usage",
  "usage_reservations",
  "suites",
  "suite_snapshots",
  "evaluations",
  "evaluation_items",
  "workflow_label_moves",
  "shares",
  "audit_events",
] as const;
export type TransferTable = (typeof TRANSFER_TABLES)[number];

/**
 * The queued asynchronous runs a process may take next, in the order keys take turns (SQLite and
 * PostgreSQL alike; `$SELECT` is the column list): each key's oldest queued run whose key has a free
 * concurrency slot, the key with the fewest runs running first, then the key served longest ago
 * (never: '' sorts first), then the oldest. One key's flood of queued runs therefore waits behind
 * every other key's next run. Each key's oldest queued run is one lookup in `runs_queued_key`, and
 * what is running comes from the partial index of running runs, so a claim costs as many lookups
 * as there are keys, whatever is queued.
 */
export const NEXT_QUEUED_RUN = `WITH heads AS (
    SELECT key_id, id FROM (SELECT k.id AS key_id, (SELECT MIN(q.id) FROM runs q WHERE q.status = 'queued' AND q.key_id = k.id) AS id FROM api_keys k) x
    WHERE id IS NOT NULL),
  busy AS (SELECT key_id, COUNT(*) AS n FROM runs WHERE status = 'running' GROUP BY key_id)
SELECT $SELECT FROM heads h JOIN runs r ON r.id = h.id JOIN api_keys k ON k.id = h.key_id LEFT JOIN busy b ON b.key_id = h.key_id
WHERE r.status = 'queued' AND (k.concurrency IS NULL OR
      COALESCE((SELECT u.reserved FROM key_usage u WHERE u.key_id = h.key_id AND u.meter = 'concurrency'), 0) < k.concurrency)
ORDER BY COALESCE(b.n, 0), COALESCE(k.queue_served_at, ''), r.id`;

/** Tables whose `seq` column numbers rows itself (an import continues after the highest). */
export const NUMBERED_TABLES: readonly TransferTable[] = ["thread_messages", "deliveries", "inbox_events", "evaluation_items", "workflow_label_moves", "audit_events"];

/** A migration's SQL for PostgreSQL: SQLite's auto-numbered integer keys become identity columns. */
export function forPostgres(sql: string): string {
  return sql.replace(/\bseq INTEGER PRIMARY KEY\b/g, "seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY");
}
