/** Where a grounded value was found: the run's input, or one of its attachments by index. */
export type GroundingSource = "input" | { attachment: number };

/** How a value was found: verbatim, after folding (case, spacing, number and date formats), approximately, or not. */
export type MatchKind = "exact" | "normalized" | "fuzzy" | "none";

/** Why a leaf is `none`: not in any source, too short to ground, contradicted (a boolean the source states otherwise), or not reached within the budget. */
export type UngroundedReason = "not_found" | "too_short" | "contradicted" | "budget";

/**
 * One leaf (string, number, boolean; dates are strings) of a generated object and where it came
 * from. Offsets are UTF-16 code units in the source's extracted text (for a PDF, the whole text with
 * its `[page n]` headers, as the model read it).
 */
export interface GroundedLeaf {
  pointer: string;
  match: MatchKind;
  source?: GroundingSource;
  /** The PDF page (1-based) the match starts on. */
  page?: number;
  start?: number;
  end?: number;
  /** The source's text at [start, end). */
  text?: string;
  /** For fuzzy matches: the similarity (0..1). */
  score?: number;
  reason?: UngroundedReason;
}

/** Grounded leaves (any match but `none`) of all leaves. */
export interface GroundingSummary {
  grounded: number;
  total: number;
}

export const summarizeGrounding = (leaves: readonly GroundedLeaf[]): GroundingSummary => ({
  grounded: leaves.filter((l) => l.match !== "none").length,
  total: leaves.length,
});
