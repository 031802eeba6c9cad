import "server-only";
import { DEFAULT_PROJECT_ID } from "../domain/roles";
import { toCatalog, type CatalogRow } from "./rows";
import { all, type StoreRunner } from "./runner";
import type { Store } from "./store-types";

/**
 * Catalog entries (workflows, contexts) as numbered versions, written once for both backends; the
 * reads of one version, of all of them and of a label's come from lifecycle-store.ts (`catalogVersions`).
 */
export function catalogStore(db: StoreRunner, versions: Pick<Store["catalog"], "version" | "versions" | "latestWithLabel">): Store["catalog"] {
  return {
    ...versions,
    async latest(kind, projectId = DEFAULT_PROJECT_ID) {
      const rows = await db.all<CatalogRow>(
        `SELECT v.* FROM catalog_versions v
         WHERE v.project_id = $2 AND v.kind = $1 AND v.version = (SELECT MAX(version) FROM catalog_versions w WHERE w.project_id = v.project_id AND w.kind = v.kind AND w.slug = v.slug)
         ORDER BY v.slug`,
        [kind, projectId],
      );
      return rows.map(toCatalog);
    },
    async get(kind, slug, projectId = DEFAULT_PROJECT_ID) {
      const [row] = await db.all<CatalogRow>("SELECT * FROM catalog_versions WHERE project_id = $3 AND kind = $1 AND slug = $2 ORDER BY version DESC LIMIT 1", [kind, slug, projectId]);
      return row ? toCatalog(row) : null;
    },
    async append(kind, slug, body, keyId, at, projectId = DEFAULT_PROJECT_ID) {
      // Versions of one entry are numbered in order, whoever appends at the same time.
      return db.transact(
        function* () {
          const [row] = yield* all<CatalogRow>(
            `INSERT INTO catalog_versions (project_id, kind, slug, version, body, key_id, created_at)
             SELECT $6, $1, $2, COALESCE(MAX(version), 0) + 1, $3, $4, $5 FROM catalog_versions WHERE project_id = $6 AND kind = $1 AND slug = $2
             RETURNING *`,
            [kind, slug, body === null ? null : JSON.stringify(body), keyId, at, projectId],
          );
          return toCatalog(row!);
        },
        { lock: `catalog:${projectId}:${kind}:${slug}` },
      );
    },
  };
}
