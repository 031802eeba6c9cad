import "server-only";
/** Where a grounded value was found: the run's input, or one of its attachments by index. */
export type GroundingSource = "input" | { attachment: number };

/** How a value was found: verbatim, after folding (case, spacing, number and date formats), approximately, or not. */
export type MatchKind = "exact" | "normalized" | "fuzzy" | "none";

/** Why a leaf is `none`: not in any source, too short to ground, contradicted (a boolean the source states otherwise), or not reached within the budget. */
export type UngroundedReason = "not_found" | "too_short" | "contradicted" | "budget";

/** One leaf of the generated object and where it came from. Offsets are UTF-16 code units in the source's extracted text. */
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

/** A text the object may have come from: the input, or an attachment's extracted text (`pdf`: has `[page n]` headers). */
export interface SourceDocument {
  source: GroundingSource;
  text: string;
  pdf?: boolean;
}

export interface GroundingBudget {
  /** Wall-clock milliseconds for the whole alignment; leaves not reached are `none` with reason `budget`. */
  timeMs: number;
  /** Units of work (candidates looked at, fuzzy comparison cells / 64); past it, the same. */
  work: number;
}

export interface GroundingSummary {
  grounded: number;
  total: number;
}

export const summarize = (leaves: readonly GroundedLeaf[]): GroundingSummary => ({
  grounded: leaves.filter((l) => l.match !== "none").length,
  total: leaves.length,
});
