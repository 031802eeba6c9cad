/**
 * Versioned schema migrations, applied in order inside one transaction each. Append only: a
 * migration that has shipped is never edited. The SQL sticks to what SQLite and PostgreSQL share.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
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
];
