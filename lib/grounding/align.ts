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
  const position: number[] = [];
  leaves.forEach((leaf, i) => {
    const list = bySibling.get(leaf.parent);
    position.push(list ? list.push(i) - 1 : 0);
    if (!list) bySibling.set(leaf.parent, [i]);
  });
  // Of several places, each leaf's own score plus its mean nearness to its siblings' first choices
  // (one sibling's wrong place weighs little). Leaves with the clearest preference choose first; a
  // place another leaf already took (two items with the same description) is then a weaker choice.
  const proximity = (i: number, c: Candidate) => {
    // At most the eight siblings either side: a leaf in an array of thousands costs no more.
    const siblings = bySibling.get(leaves[i]!.parent) ?? [];
    const k = position[i]!;
    const near = siblings.slice(Math.max(0, k - 8), k + 9).filter((j) => j !== i && first[j]);
    if (near.length === 0) return 0;
    let sum = 0;
    for (const j of near) sum += first[j]!.doc === c.doc ? 1 / (1 + Math.abs(first[j]!.start - c.start) / 200) : 0;
    return sum / near.length;
  };
  const chosen: (Candidate | null)[] = found.map((f) => (typeof f === "object" && f.length === 1 ? f[0]! : null));
  const taken = new Set(chosen.filter((c) => c !== null).map((c) => `${c.doc}:${c.start}`));
  const open = found
    .map((f, i) => ({ i, scored: typeof f === "object" && f.length > 1 ? f.map((c) => ({ c, s: score(leaves[i]!, c) + proximity(i, c) })).sort((a, b) => b.s - a.s) : [] }))
    .filter((o) => o.scored.length > 1)
    .sort((a, b) => b.scored[0]!.s - b.scored[1]!.s - (a.scored[0]!.s - a.scored[1]!.s));
  for (const { i, scored } of open) {
    const pick = best(scored, (o) => o.s - (taken.has(`${o.c.doc}:${o.c.start}`) ? 0.5 : 0)).c;
    chosen[i] = pick;
    taken.add(`${pick.doc}:${pick.start}`);
  }
  return leaves.map((leaf, i): GroundedLeaf => {
    const f = found[i];
    if (typeof f !== "object") return { pointer: leaf.pointer, match: "none", reason: f ?? "not_found" };
    const place = chosen[i];
    if (!place) return { pointer: leaf.pointer, match: "none", reason: "not_found" };
    const index = sources.indexes[place.doc]!;
    const page = pageAt(index, place.start);
    return {
      pointer: leaf.pointer,
      match: place.match,
      source: index.doc.source,
      ...(page !== undefined ? { page } : {}),
      start: place.start,
      end: place.end,
      text: index.doc.text.slice(place.start, place.end),
      ...(place.score !== undefined ? { score: place.score } : {}),
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
