import "server-only";
import { boundedPatternToGbnf, patternToGbnf, singleClassPattern } from "./regex";

/** The length ranges the corpus asks `boundedPatternToGbnf` for: none, open, wide, exact, long. */
const BOUNDS: readonly [number, number | undefined][] = [
  [0, 8],
  [3, undefined],
  [1, 64],
  [5, 5],
  [2, 300],
];

/** Everything the regex front end answers for one pattern (a throw is recorded, not raised). */
export function corpusOutputs(pattern: string) {
  const run = <T>(f: () => T): T | string => {
    try {
      return f();
    } catch (error) {
      return `THROW ${(error as Error).message}`;
    }
  };
  return {
    gbnf: run(() => patternToGbnf(pattern)),
    bounded: BOUNDS.map(([min, max]) => run(() => boundedPatternToGbnf(pattern, min, max))),
    single: run(() => singleClassPattern(pattern)),
  };
}
