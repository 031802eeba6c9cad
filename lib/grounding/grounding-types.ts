import "server-only";
import type { GroundingSource } from "../domain/grounding";

export type { GroundedLeaf, GroundingSource, GroundingSummary, MatchKind, UngroundedReason } from "../domain/grounding";
export { summarizeGrounding } from "../domain/grounding";

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
