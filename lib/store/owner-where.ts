import "server-only";
import type { OwnerScope } from "./key-types";

/**
 * The WHERE clause of a list scoped to one key or one project (a record's project is its key's:
 * keys never change project), its placeholders numbered from `$1`.
 */
export function ownerWhere(scope: OwnerScope): { where: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  if (scope.keyId !== undefined) (params.push(scope.keyId), where.push(`key_id = $${params.length}`));
  if (scope.projectId !== undefined) (params.push(scope.projectId), where.push(`key_id IN (SELECT id FROM api_keys WHERE project_id = $${params.length})`));
  return { where: where.length ? `WHERE ${where.join(" AND ")}` : "", params };
}
