import "server-only";
import { check } from "recheck";
import { LRUCache } from "lru-cache";

export type BacktrackingVerdict = { safe: true; checker?: string } | { safe: false; detail: string };

/** Verdicts by pattern: schemas repeat the same few patterns, and an analysis can take a second. */
const verdicts = new LRUCache<string, Promise<BacktrackingVerdict>>({ max: 2_000 });

/**
 * Whether a pattern that only JavaScript's backtracking engine can run (see pattern-engine.mjs)
 * can take super-linear time, by recheck's ReDoS analysis (automaton theory where it applies,
 * fuzzing otherwise), off the event loop. A pattern proven vulnerable is refused; one the analysis
 * could not decide within `timeoutMs` is let through: it still runs only inside the schema
 * worker's time limit, which stops a runaway match.
 */
export function backtrackingVerdict(pattern: string, timeoutMs: number): Promise<BacktrackingVerdict> {
  let verdict = verdicts.get(pattern);
  if (!verdict) {
    verdict = analyse(pattern, timeoutMs);
    verdicts.set(pattern, verdict);
  }
  return verdict;
}

async function analyse(pattern: string, timeoutMs: number): Promise<BacktrackingVerdict> {
  const diagnostics = await check(pattern, "u", { timeout: timeoutMs }).catch(() => null);
  if (diagnostics === null || diagnostics.status !== "vulnerable") return { safe: true, checker: diagnostics?.checker };
  return {
    safe: false,
    detail: `can backtrack in ${diagnostics.complexity.type} time (${diagnostics.complexity.summary}) on an input such as ${diagnostics.attack.pattern.slice(0, 120)}`,
  };
}
