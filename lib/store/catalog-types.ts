/** Catalog versions, label moves and share links: the records of `Store["catalog"]`, `labels` and `shares`. */

import "server-only";

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
