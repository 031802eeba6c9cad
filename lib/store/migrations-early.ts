import "server-only";
import type { Migration } from "./migrations";

/** Migrations 1 to 12, as they shipped (append only: never edited); migrations.ts lists them first. */
export const EARLY_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "keys and runs",
    sql: `
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE,
        prefix TEXT NOT NULL,
        admin BOOLEAN NOT NULL DEFAULT FALSE,
        created_at TEXT NOT NULL,
        last_used_at TEXT,
        revoked_at TEXT
      );
      CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        operation TEXT NOT NULL,
        workflow_slug TEXT NOT NULL,
        key_id TEXT NOT NULL REFERENCES api_keys(id),
        status TEXT NOT NULL,
        input TEXT NOT NULL,
        schema_json TEXT,
        context_slugs TEXT NOT NULL,
        attachments TEXT NOT NULL,
        callback TEXT,
        output_json TEXT,
        error_json TEXT,
        model_name TEXT,
        model_tag TEXT,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cost TEXT NOT NULL DEFAULT '0',
        duration_ms INTEGER,
        attempts INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        finished_at TEXT
      );
      CREATE INDEX runs_key_id ON runs (key_id, id);
      CREATE INDEX runs_workflow_id ON runs (workflow_slug, id);
      CREATE INDEX runs_status ON runs (status);
    `,
  },
  {
    version: 2,
    name: "threads",
    // Thread ids are chosen by callers, so they are scoped by key: two keys may both use "t-1".
    sql: `
      CREATE TABLE threads (
        key_id TEXT NOT NULL REFERENCES api_keys(id),
        id TEXT NOT NULL,
        workflow_slug TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (key_id, id)
      );
      CREATE TABLE thread_messages (
        seq INTEGER PRIMARY KEY,
        key_id TEXT NOT NULL,
        thread_id TEXT NOT NULL,
        run_id TEXT,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at TEXT NOT NULL,
        FOREIGN KEY (key_id, thread_id) REFERENCES threads (key_id, id) ON DELETE CASCADE
      );
      CREATE INDEX thread_messages_thread ON thread_messages (key_id, thread_id, seq);
    `,
  },
  {
    version: 3,
    name: "callback events (outbox), deliveries, webhook secrets, inboxes",
    sql: `
      ALTER TABLE api_keys ADD COLUMN webhook_secret TEXT;
      ALTER TABLE api_keys ADD COLUMN previous_webhook_secret TEXT;
      ALTER TABLE api_keys ADD COLUMN previous_secret_until TEXT;
      CREATE TABLE events (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        key_id TEXT NOT NULL,
        url TEXT NOT NULL,
        headers TEXT NOT NULL,
        payload TEXT NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX events_due ON events (status, next_attempt_at);
      CREATE INDEX events_run ON events (run_id);
      CREATE TABLE deliveries (
        seq INTEGER PRIMARY KEY,
        event_id TEXT NOT NULL REFERENCES events(id),
        attempted_at TEXT NOT NULL,
        status_code INTEGER,
        error TEXT,
        duration_ms INTEGER NOT NULL,
        next_attempt_at TEXT
      );
      CREATE INDEX deliveries_event ON deliveries (event_id, seq);
      CREATE TABLE inboxes (
        id TEXT PRIMARY KEY,
        key_id TEXT NOT NULL REFERENCES api_keys(id),
        host TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE inbox_events (
        seq INTEGER PRIMARY KEY,
        inbox_id TEXT NOT NULL REFERENCES inboxes(id),
        received_at TEXT NOT NULL,
        headers TEXT NOT NULL,
        body TEXT NOT NULL,
        verified BOOLEAN NOT NULL
      );
      CREATE INDEX inbox_events_inbox ON inbox_events (inbox_id, seq);
    `,
  },
  {
    version: 4,
    name: "async runs and idempotency keys",
    sql: `
      ALTER TABLE runs ADD COLUMN request_json TEXT;
      ALTER TABLE runs ADD COLUMN async_starts INTEGER NOT NULL DEFAULT 0;
      CREATE TABLE idempotency_keys (
        key_id TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        state TEXT NOT NULL,
        run_id TEXT,
        response_status INTEGER,
        response_body TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (key_id, idempotency_key)
      );
    `,
  },
  {
    version: 5,
    name: "chunks of large contexts used by a run",
    sql: `ALTER TABLE runs ADD COLUMN context_chunks TEXT;`,
  },
  {
    version: 6,
    name: "versioned workflows and contexts managed through the API; what each run used",
    sql: `
      CREATE TABLE catalog_versions (
        kind TEXT NOT NULL,
        slug TEXT NOT NULL,
        version INTEGER NOT NULL,
        body TEXT,
        key_id TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (kind, slug, version)
      );
      ALTER TABLE runs ADD COLUMN workflow_version TEXT;
      ALTER TABLE runs ADD COLUMN context_versions TEXT;
      ALTER TABLE runs ADD COLUMN prompt_hash TEXT;
      ALTER TABLE runs ADD COLUMN schema_hash TEXT;
    `,
  },
  {
    version: 7,
    name: "how each run's output was held to its schema (grammar, provider, prompt)",
    sql: `ALTER TABLE runs ADD COLUMN decoding TEXT;`,
  },
  {
    version: 8,
    name: "the prompt's size in the model's own tokens, and the output cap its context window left",
    sql: `
      ALTER TABLE runs ADD COLUMN prompt_tokens INTEGER;
      ALTER TABLE runs ADD COLUMN output_token_limit INTEGER;
    `,
  },
  {
    version: 9,
    name: "leases: which process executes a run or delivers an event, and until when",
    sql: `
      ALTER TABLE runs ADD COLUMN lease_owner TEXT;
      ALTER TABLE runs ADD COLUMN lease_until TEXT;
      ALTER TABLE events ADD COLUMN lease_until TEXT;
      CREATE INDEX runs_running_lease ON runs (status, lease_until);
    `,
  },
  {
    version: 10,
    name: "streamed runs' events, shared between processes (resume on any replica)",
    sql: `
      CREATE TABLE stream_events (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        event TEXT NOT NULL,
        final INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
      );
      CREATE INDEX stream_events_final ON stream_events (final, created_at);
    `,
  },
  {
    version: 11,
    name: "per-key limits and budgets: meters shared by every process, and each run's reservations on them",
    sql: `
      ALTER TABLE api_keys ADD COLUMN rpm INTEGER;
      ALTER TABLE api_keys ADD COLUMN tpm INTEGER;
      ALTER TABLE api_keys ADD COLUMN concurrency INTEGER;
      ALTER TABLE api_keys ADD COLUMN workflows TEXT;
      ALTER TABLE api_keys ADD COLUMN budget_daily_nanos BIGINT;
      ALTER TABLE api_keys ADD COLUMN budget_monthly_nanos BIGINT;
      CREATE TABLE key_usage (
        key_id TEXT NOT NULL REFERENCES api_keys(id),
        meter TEXT NOT NULL,
        used BIGINT NOT NULL DEFAULT 0,
        reserved BIGINT NOT NULL DEFAULT 0,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (key_id, meter)
      );
      CREATE TABLE usage_reservations (
        run_id TEXT NOT NULL,
        key_id TEXT NOT NULL,
        meter TEXT NOT NULL,
        amount BIGINT NOT NULL,
        PRIMARY KEY (run_id, meter)
      );
    `,
  },
  {
    version: 12,
    name: "usage reports by time, and the trace each run and its callback belong to",
    sql: `
      ALTER TABLE runs ADD COLUMN traceparent TEXT;
      ALTER TABLE events ADD COLUMN traceparent TEXT;
      CREATE INDEX runs_created_at ON runs (created_at);
    `,
  },
];
