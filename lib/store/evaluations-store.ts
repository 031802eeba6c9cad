import "server-only";
import type { ProblemBody } from "../errors";
import type { StoreRunner } from "./runner";
import { ownerWhere } from "./owner-where";
import type { EvaluationItemRecord, EvaluationRecord, EvaluationStatus, Store, SuiteRecord, SuiteSnapshot } from "./store-types";

/**
 * Suites and evaluations, written once for both backends: every operation is a single statement
 * (atomic on its own); a claimed row is locked as the dialect says.
 */
interface SuiteRow {
  slug: string;
  key_id: string;
  version: number | string;
  document: string;
  created_at: string;
  updated_at: string;
}

interface EvaluationRow {
  id: string;
  suite_slug: string;
  suite_version: number | string;
  key_id: string;
  status: EvaluationStatus;
  target_json: string;
  snapshot_id: string;
  summary_json: string | null;
  error_json: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

interface ItemRow {
  seq: number | string;
  case_index: number | string;
  repeat_index: number | string;
  run_id: string | null;
  status: EvaluationItemRecord["status"];
  output_json: string | null;
  checks_json: string;
  error_json: string | null;
  duration_ms: number | string | null;
  input_tokens: number | string;
  output_tokens: number | string;
  cost: string;
  created_at: string;
}

const toSuite = (row: SuiteRow): SuiteRecord => ({
  slug: row.slug,
  keyId: row.key_id,
  version: Number(row.version),
  document: JSON.parse(row.document) as Record<string, unknown>,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toEvaluation = (row: EvaluationRow): EvaluationRecord => ({
  id: row.id,
  suiteSlug: row.suite_slug,
  suiteVersion: Number(row.suite_version),
  keyId: row.key_id,
  status: row.status,
  target: JSON.parse(row.target_json) as Record<string, unknown>,
  snapshotId: row.snapshot_id,
  summary: row.summary_json === null ? null : (JSON.parse(row.summary_json) as unknown),
  error: row.error_json === null ? null : (JSON.parse(row.error_json) as ProblemBody),
  createdAt: row.created_at,
  startedAt: row.started_at,
  finishedAt: row.finished_at,
});

const toItem = (row: ItemRow): EvaluationItemRecord => ({
  seq: Number(row.seq),
  caseIndex: Number(row.case_index),
  repeat: Number(row.repeat_index),
  runId: row.run_id,
  status: row.status,
  output: row.output_json === null ? null : (JSON.parse(row.output_json) as unknown),
  checks: JSON.parse(row.checks_json) as unknown[],
  error: row.error_json === null ? null : (JSON.parse(row.error_json) as ProblemBody),
  durationMs: row.duration_ms === null ? null : Number(row.duration_ms),
  inputTokens: Number(row.input_tokens),
  outputTokens: Number(row.output_tokens),
  cost: row.cost,
  createdAt: row.created_at,
});

interface SnapshotRow {
  id: string;
  suite_slug: string;
  suite_version: number | string;
  document: string;
  created_at: string;
}

const toSnapshot = (row: SnapshotRow): SuiteSnapshot => ({
  id: row.id,
  suiteSlug: row.suite_slug,
  suiteVersion: Number(row.suite_version),
  document: JSON.parse(row.document) as Record<string, unknown>,
  createdAt: row.created_at,
});

/** An evaluation `$n` may claim: queued, or running under a lease that ran out by `$n` (`e`: the table's alias). */
const claimable = (e: string, now: string) => `(${e}.status = 'queued' OR (${e}.status = 'running' AND (${e}.lease_until IS NULL OR ${e}.lease_until < ${now})))`;

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

export function evaluationStore(db: StoreRunner): Pick<Store, "suites" | "evaluations"> {
  const heldBy = "status = 'running' AND lease_owner = $2";
  return {
    suites: {
      async put(slug, keyId, document, at) {
        const [row] = await db.all<SuiteRow & { created: number | boolean }>(
          `INSERT INTO suites (slug, key_id, version, document, created_at, updated_at) VALUES ($1, $2, 1, $3, $4, $4)
           ON CONFLICT (slug) DO UPDATE SET version = suites.version + 1, document = excluded.document, updated_at = excluded.updated_at
           RETURNING *`,
          [slug, keyId, JSON.stringify(document), at],
        );
        const suite = toSuite(row!);
        return { suite, created: suite.version === 1 };
      },
      async get(slug) {
        const [row] = await db.all<SuiteRow>("SELECT * FROM suites WHERE slug = $1", [slug]);
        return row ? toSuite(row) : null;
      },
      async list(scope = {}) {
        const { where, params } = ownerWhere(scope);
        const rows = await db.all<SuiteRow>(`SELECT * FROM suites ${where} ORDER BY slug`, params);
        return rows.map(toSuite);
      },
      async delete(slug) {
        return (await db.run("DELETE FROM suites WHERE slug = $1", [slug])) > 0;
      },
    },
    evaluations: {
      async saveSnapshot(snapshot) {
        const text = JSON.stringify(snapshot.document);
        // The document is compared in the database: an unchanged version is found, never written again.
        const find = "SELECT id FROM suite_snapshots WHERE suite_slug = $1 AND suite_version = $2 AND document = $3 ORDER BY id LIMIT 1";
        const [found] = await db.all<{ id: string }>(find, [snapshot.suiteSlug, snapshot.suiteVersion, text]);
        if (found) return found.id;
        await db.run("INSERT INTO suite_snapshots (id, suite_slug, suite_version, document, created_at) VALUES ($1, $2, $3, $4, $5)", [
          snapshot.id,
          snapshot.suiteSlug,
          snapshot.suiteVersion,
          text,
          snapshot.createdAt,
        ]);
        return snapshot.id;
      },
      async snapshot(id) {
        const [row] = await db.all<SnapshotRow>("SELECT * FROM suite_snapshots WHERE id = $1", [id]);
        return row ? toSnapshot(row) : null;
      },
      async insert(e, options = {}) {
        const inserted = await db.run(
          `INSERT INTO evaluations (id, suite_slug, suite_version, key_id, status, target_json, snapshot_id, created_at)
           SELECT CAST($1 AS TEXT), CAST($2 AS TEXT), CAST($3 AS INTEGER), CAST($4 AS TEXT), 'queued', CAST($5 AS TEXT), CAST($6 AS TEXT), CAST($7 AS TEXT)
           WHERE (SELECT COUNT(*) FROM evaluations WHERE key_id = $4 AND status = 'queued') < CAST($8 AS BIGINT)`,
          [e.id, e.suiteSlug, e.suiteVersion, e.keyId, JSON.stringify(e.target), e.snapshotId, e.createdAt, options.maxQueued ?? Number.MAX_SAFE_INTEGER],
        );
        return inserted > 0;
      },
      async get(id) {
        const [row] = await db.all<EvaluationRow>("SELECT * FROM evaluations WHERE id = $1", [id]);
        return row ? toEvaluation(row) : null;
      },
      async list(filter) {
        const where: string[] = [];
        const params: unknown[] = [];
        const add = (clause: string, value: unknown) => {
          params.push(value);
          where.push(clause.replace("?", `$${params.length}`));
        };
        if (filter.suiteSlug !== undefined) add("suite_slug = ?", filter.suiteSlug);
        if (filter.keyId !== undefined) add("key_id = ?", filter.keyId);
        if (filter.projectId !== undefined) add("key_id IN (SELECT id FROM api_keys WHERE project_id = ?)", filter.projectId);
        if (filter.status !== undefined) add("status = ?", filter.status);
        if (filter.beforeId !== undefined) add("id < ?", filter.beforeId);
        params.push(filter.limit);
        const rows = await db.all<EvaluationRow>(`SELECT * FROM evaluations ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT $${params.length}`, params);
        return rows.map(toEvaluation);
      },
      async claim(now, lease) {
        // Keys take turns, in one statement so replicas claiming together share the same order: the
        // key with the fewest evaluations running under a live lease first, then the key served
        // longest ago (never: '' sorts first), then that key's oldest evaluation.
        const [row] = await db.all<EvaluationRow>(
          `UPDATE evaluations SET status = 'running', lease_owner = $1, lease_until = $2, started_at = COALESCE(started_at, $3), claimed_at = $3
           WHERE id = (
             SELECT e.id FROM evaluations e WHERE ${claimable("e", "$3")}
             ORDER BY (SELECT COUNT(*) FROM evaluations r WHERE r.key_id = e.key_id AND r.status = 'running' AND r.lease_until >= $3),
                      (SELECT COALESCE(MAX(c.claimed_at), '') FROM evaluations c WHERE c.key_id = e.key_id),
                      e.id
             LIMIT 1${db.dialect.skipLocked}
           ) AND ${claimable("evaluations", "$3")}
           RETURNING *`,
          [lease.owner, lease.until, now],
        );
        return row ? toEvaluation(row) : null;
      },
      async requeue(id, owner) {
        return (await db.run(`UPDATE evaluations SET status = 'queued', lease_owner = NULL, lease_until = NULL WHERE id = $1 AND ${heldBy}`, [id, owner])) > 0;
      },
      async othersQueued(keyId) {
        return (await db.all("SELECT 1 FROM evaluations WHERE status = 'queued' AND key_id <> $1 LIMIT 1", [keyId])).length > 0;
      },
      async renewLeases(owner, ids, until) {
        const held: string[] = [];
        for (const id of ids) {
          if ((await db.run(`UPDATE evaluations SET lease_until = $3 WHERE id = $1 AND ${heldBy}`, [id, owner, until])) > 0) held.push(id);
        }
        return held;
      },
      async releaseLeases() {
        await db.run("UPDATE evaluations SET lease_until = NULL, lease_owner = NULL WHERE status = 'running'", []);
      },
      async items(id, afterSeq = 0) {
        const rows = await db.all<ItemRow>("SELECT * FROM evaluation_items WHERE evaluation_id = $1 AND seq > $2 ORDER BY seq", [id, afterSeq]);
        return rows.map(toItem);
      },
      async recordItem(id, owner, item) {
        const inserted = await db.run(
          `INSERT INTO evaluation_items (evaluation_id, case_index, repeat_index, run_id, status, output_json, checks_json, error_json,
                                         duration_ms, input_tokens, output_tokens, cost, created_at)
           SELECT CAST($1 AS TEXT), CAST($3 AS INTEGER), CAST($4 AS INTEGER), CAST($5 AS TEXT), CAST($6 AS TEXT), CAST($7 AS TEXT), CAST($8 AS TEXT),
                  CAST($9 AS TEXT), CAST($10 AS INTEGER), CAST($11 AS INTEGER), CAST($12 AS INTEGER), CAST($13 AS TEXT), CAST($14 AS TEXT) WHERE EXISTS (SELECT 1 FROM evaluations WHERE id = $1 AND ${heldBy})
           ON CONFLICT (evaluation_id, case_index, repeat_index) DO NOTHING`,
          [
            id,
            owner,
            item.caseIndex,
            item.repeat,
            item.runId,
            item.status,
            json(item.output),
            JSON.stringify(item.checks),
            json(item.error),
            item.durationMs,
            item.inputTokens,
            item.outputTokens,
            item.cost,
            item.createdAt,
          ],
        );
        if (inserted > 0) return true;
        const [still] = await db.all<{ id: string }>(`SELECT id FROM evaluations WHERE id = $1 AND ${heldBy}`, [id, owner]);
        return still !== undefined;
      },
      async cancel(id, at) {
        return (
          (await db.run("UPDATE evaluations SET status = 'cancelled', finished_at = $2, lease_owner = NULL, lease_until = NULL WHERE id = $1 AND status IN ('queued', 'running')", [id, at])) > 0
        );
      },
      async undecidedPromotions() {
        const rows = await db.all<EvaluationRow>(
          `SELECT e.* FROM evaluations e
           WHERE e.status IN ('completed', 'failed') AND e.target_json LIKE '%"promotion":%'
             AND NOT EXISTS (SELECT 1 FROM workflow_label_moves m WHERE m.evaluation_id = e.id)
           ORDER BY e.id`,
          [],
        );
        return rows.map(toEvaluation);
      },
      async finish(id, owner, outcome, event) {
        if (event) {
          // Queued only while the evaluation is still held; its id is fixed, so a repeat adds nothing.
          await db.run(
            `INSERT INTO events (id, run_id, key_id, url, headers, payload, status, attempts, next_attempt_at, created_at, updated_at, traceparent)
             SELECT CAST($3 AS TEXT), CAST($1 AS TEXT), CAST($4 AS TEXT), CAST($5 AS TEXT), CAST($6 AS TEXT), CAST($7 AS TEXT), 'pending', 0,
                    CAST($8 AS TEXT), CAST($9 AS TEXT), CAST($9 AS TEXT), NULL WHERE EXISTS (SELECT 1 FROM evaluations WHERE id = $1 AND ${heldBy})
             ON CONFLICT (id) DO NOTHING`,
            [id, owner, event.id, event.keyId, event.url, JSON.stringify(event.headers), event.payload, event.nextAttemptAt, event.createdAt],
          );
        }
        const changed = await db.run(
          `UPDATE evaluations SET status = $3, summary_json = $4, error_json = $5, finished_at = $6, lease_owner = NULL, lease_until = NULL
           WHERE id = $1 AND ${heldBy}`,
          [id, owner, outcome.status, json(outcome.summary), json(outcome.error), outcome.finishedAt],
        );
        return changed > 0;
      },
    },
  };
}
