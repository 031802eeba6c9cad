import "server-only";
import { findCandidates, Sources, type Candidate } from "./find-candidates";
import type { GroundedLeaf, GroundingBudget, SourceDocument } from "./grounding-types";
import { collectLeaves, type Leaf } from "./leaves";
import { fold, pageAt } from "./source-index";

/** How far before a place its label is looked for (same line). */
const LABEL_CHARS = 80;
const TIER = { exact: 1, normalized: 0.6, fuzzy: 0.3 } as const;

/** Fraction of the leaf's property words (their first five letters) in the text just before the place, on its line. */
function labelScore(sources: Sources, leaf: Leaf, c: Candidate): number {
  if (leaf.words.length === 0) return 0;
  const text = sources.indexes[c.doc]!.doc.text;
  const lineStart = text.lastIndexOf("\n", c.start - 1) + 1;
  const before = fold(text.slice(Math.max(lineStart, c.start - LABEL_CHARS), c.start));
  return leaf.words.filter((w) => before.includes(w.slice(0, 5))).length / leaf.words.length;
}

/**
 * Aligns each string, number and boolean leaf of `object` with the sources it may have come from,
 * without a model: see find-candidates.ts for what counts as a match. Of several places, the one
 * preceded by the property's name (`Total: 1,234.50` for /total, not a line item's amount) and
 * nearest to its siblings' places wins. Leaves not reached within the budget are `none`, reason
 * `budget`; the work is linear in the sources' size plus the leaves'.
 */
export function alignObject(object: unknown, docs: readonly SourceDocument[], budget: GroundingBudget, now: () => number = Date.now): GroundedLeaf[] {
  const started = now();
  const leaves = collectLeaves(object);
  let work = 0;
  let exhausted = false;
  const spend = (units: number) => {
    work += units;
    if (work > budget.work || now() - started > budget.timeMs) exhausted = true;
    return !exhausted;
  };
  const sources = new Sources(docs);
  spend(0);
  const found: (Candidate[] | GroundedLeaf["reason"])[] = [];
  for (const leaf of leaves) {
    if (exhausted || !spend(1)) {
      found.push("budget");
      continue;
    }
    const result = findCandidates(sources, leaf, spend);
    found.push(exhausted && (typeof result !== "object" || result.length === 0) ? "budget" : result);
    if (typeof result === "object") spend(result.length);
  }

  // First choice: label and kind; then, among several, nearness to the siblings' first choices.
  const score = (leaf: Leaf, c: Candidate) => 2 * labelScore(sources, leaf, c) + TIER[c.match] * (c.score ?? 1);
  const first = found.map((f, i) => (typeof f === "object" && f.length > 0 ? best(f, (c) => score(leaves[i]!, c)) : null));
  const bySibling = new Map<string, number[]>();
  leaves.forEach((leaf, i) => {
    const list = bySibling.get(leaf.parent);
    if (list) list.push(i);
    else bySibling.set(leaf.parent, [i]);
  });
  return leaves.map((leaf, i): GroundedLeaf => {
    const f = found[i];
    if (typeof f !== "object") return { pointer: leaf.pointer, match: "none", reason: f ?? "not_found" };
    if (f.length === 0) return { pointer: leaf.pointer, match: "none", reason: "not_found" };
    let chosen = first[i]!;
    if (f.length > 1) {
      const near = (bySibling.get(leaf.parent) ?? []).filter((j) => j !== i && first[j]).map((j) => first[j]!);
      if (near.length > 0) {
        const proximity = (c: Candidate) => {
          let d = Infinity;
          for (const n of near) if (n.doc === c.doc) d = Math.min(d, Math.abs(n.start - c.start));
          return 1 / (1 + d / 200);
        };
        chosen = best(f, (c) => score(leaf, c) + proximity(c));
      }
    }
    const index = sources.indexes[chosen.doc]!;
    const page = pageAt(index, chosen.start);
    return {
      pointer: leaf.pointer,
      match: chosen.match,
      source: index.doc.source,
      ...(page !== undefined ? { page } : {}),
      start: chosen.start,
      end: chosen.end,
      text: index.doc.text.slice(chosen.start, chosen.end),
      ...(chosen.score !== undefined ? { score: chosen.score } : {}),
    };
  });
}

function best<T extends object>(items: readonly T[], score: (item: T) => number): T {
  let top = items[0]!;
  let topScore = score(top);
  for (const item of items.slice(1)) {
    const s = score(item);
    if (s > topScore) [top, topScore] = [item, s];
  }
  return top;
}
