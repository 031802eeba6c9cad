import "server-only";
import { DEFAULT_PROJECT_ID } from "../domain/roles";
import { ownerWhere } from "./owner-where";
import { cappedWrite } from "./quotas";
import type { StoreRunner } from "./runner";
import type { CatalogKind, CatalogVersion, LabelMove, ShareRecord, Store } from "./store-types";

interface CatalogRow {
  kind: CatalogKind;
  slug: string;
  version: number | string;
  body: string | null;
  key_id: string | null;
  created_at: string;
}

interface MoveRow {
  seq: number | string;
  slug: string;
  label: string;
  outcome: LabelMove["outcome"];
  version: string | null;
  previous: string | null;
  key_id: string;
  evaluation_id: string | null;
  pass_rate: number | string | null;
  created_at: string;
}

interface ShareRow {
  id: string;
  token_hash: string;
  kind: ShareRecord["kind"];
  target_id: string;
  key_id: string;
  hide_fields: string;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

const toVersion = (row: CatalogRow): CatalogVersion => ({
  kind: row.kind,
  slug: row.slug,
  version: Number(row.version),
  body: row.body === null ? null : (JSON.parse(row.body) as Record<string, unknown>),
  keyId: row.key_id,
  createdAt: row.created_at,
});

const toMove = (row: MoveRow): LabelMove => ({
  seq: Number(row.seq),
  slug: row.slug,
  label: row.label,
  outcome: row.outcome,
  version: row.version,
  previous: row.previous,
  keyId: row.key_id,
  evaluationId: row.evaluation_id,
  passRate: row.pass_rate === null ? null : Number(row.pass_rate),
  createdAt: row.created_at,
});

const toShare = (row: ShareRow): ShareRecord => ({
  id: row.id,
  tokenHash: row.token_hash,
  kind: row.kind,
  targetId: row.target_id,
  keyId: row.key_id,
  hideFields: JSON.parse(row.hide_fields) as string[],
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at,
  createdAt: row.created_at,
});

/** Where a label points now: its newest move or removal (a refused promotion moves nothing). */
const CURRENT = `SELECT version FROM workflow_label_moves c WHERE c.project_id = $9 AND c.slug = $1 AND c.label = $2 AND c.outcome <> 'refused' ORDER BY c.seq DESC LIMIT 1`;

/**
 * The workflow lifecycle's storage, written once for both backends (see evaluations.ts): versions
 * of catalog entries, label moves and share links. A label is its history — the newest move is where
 * it points — so a move is one INSERT, atomic on its own, and a promotion decided twice (after a
 * crash) is recorded once by the unique evaluation id.
 */
export function lifecycleStore(db: StoreRunner): Pick<Store, "labels" | "shares"> & { catalogVersions: Pick<Store["catalog"], "version" | "versions" | "latestWithLabel"> } {
  return {
    catalogVersions: {
      async version(kind, slug, version, projectId = DEFAULT_PROJECT_ID) {
        const [row] = await db.all<CatalogRow>("SELECT * FROM catalog_versions WHERE project_id = $4 AND kind = $1 AND slug = $2 AND version = $3", [kind, slug, version, projectId]);
        return row ? toVersion(row) : null;
      },
      async latestWithLabel(slug, label, projectId = DEFAULT_PROJECT_ID) {
        // A removed label's newest entry has a null version; refused promotions never move it.
        const [row] = await db.all<CatalogRow & { labelled: string | null }>(
          `SELECT v.*, (SELECT m.version FROM workflow_label_moves m WHERE m.project_id = $3 AND m.slug = $1 AND m.label = $2 AND m.outcome <> 'refused' ORDER BY m.seq DESC LIMIT 1) AS labelled
           FROM catalog_versions v WHERE v.project_id = $3 AND v.kind = 'workflow' AND v.slug = $1 ORDER BY v.version DESC LIMIT 1`,
          [slug, label, projectId],
        );
        return row ? { latest: toVersion(row), labelled: row.labelled } : null;
      },
      async versions(kind, slug, projectId = DEFAULT_PROJECT_ID) {
        return (await db.all<CatalogRow>("SELECT * FROM catalog_versions WHERE project_id = $3 AND kind = $1 AND slug = $2 ORDER BY version", [kind, slug, projectId])).map(toVersion);
      },
    },
    labels: {
      async current(slug, projectId = DEFAULT_PROJECT_ID) {
        const rows = await db.all<MoveRow>(
          `SELECT m.* FROM workflow_label_moves m
           WHERE m.project_id = $2 AND m.slug = $1 AND m.outcome = 'moved'
             AND m.seq = (SELECT MAX(n.seq) FROM workflow_label_moves n WHERE n.project_id = m.project_id AND n.slug = m.slug AND n.label = m.label AND n.outcome <> 'refused')
           ORDER BY m.label`,
          [slug, projectId],
        );
        return rows.map(toMove);
      },
      async get(slug, label, projectId = DEFAULT_PROJECT_ID) {
        const [row] = await db.all<MoveRow>(
          "SELECT * FROM workflow_label_moves WHERE project_id = $3 AND slug = $1 AND label = $2 AND outcome <> 'refused' ORDER BY seq DESC LIMIT 1",
          [slug, label, projectId],
        );
        return row && row.outcome === "moved" ? toMove(row) : null;
      },
      async record(move, projectId = DEFAULT_PROJECT_ID) {
        const rows = await db.all<MoveRow>(
          `INSERT INTO workflow_label_moves (slug, label, outcome, version, previous, key_id, evaluation_id, pass_rate, created_at, project_id)
           VALUES ($1, $2, $3, $4, (${CURRENT}), $5, $6, $7, $8, $9)
           ON CONFLICT DO NOTHING
           RETURNING *`,
          [move.slug, move.label, move.outcome, move.version, move.keyId, move.evaluationId, move.passRate, move.createdAt, projectId],
        );
        return rows[0] ? toMove(rows[0]) : null;
      },
      async history(slug, projectId = DEFAULT_PROJECT_ID) {
        return (await db.all<MoveRow>("SELECT * FROM workflow_label_moves WHERE project_id = $2 AND slug = $1 ORDER BY seq DESC", [slug, projectId])).map(toMove);
      },
    },
    shares: {
      async create(s, limit) {
        await cappedWrite(db, limit === undefined ? undefined : { resource: "shares", keyId: s.keyId, limit, at: s.createdAt }, {
          sql: `INSERT INTO shares (id, token_hash, kind, target_id, key_id, hide_fields, expires_at, revoked_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, $8)`,
          params: [s.id, s.tokenHash, s.kind, s.targetId, s.keyId, JSON.stringify(s.hideFields), s.expiresAt, s.createdAt],
        });
      },
      async get(id) {
        const [row] = await db.all<ShareRow>("SELECT * FROM shares WHERE id = $1", [id]);
        return row ? toShare(row) : null;
      },
      async byToken(tokenHash) {
        const [row] = await db.all<ShareRow>("SELECT * FROM shares WHERE token_hash = $1", [tokenHash]);
        return row ? toShare(row) : null;
      },
      async list(scope) {
        const { where, params } = ownerWhere(scope);
        const rows = await db.all<ShareRow>(`SELECT * FROM shares ${where} ORDER BY id DESC`, params);
        return rows.map(toShare);
      },
      async revoke(id, at) {
        return (await db.run("UPDATE shares SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL", [id, at])) > 0;
      },
    },
  };
}
