import "server-only";

/** Points kept at most (about 3 KB stored with the run), however long the stream. */
const MOST = 256;

/**
 * How a streamed output arrived, for replaying it at its pace (share links): [ms since the run
 * began, characters so far]. A point every 40 ms; past MOST points every other one is dropped and
 * the spacing doubles, so a long stream keeps its whole shape in bounded space. The newest mark is
 * always the last point.
 */
export class PaceRecorder {
  private kept: [number, number][] = [];
  private newest: [number, number] | null = null;
  private spacing = 40;

  mark(ms: number, chars: number): void {
    const previous = this.kept.at(-1);
    if (previous && ms - previous[0] < this.spacing) {
      this.newest = [ms, chars];
      return;
    }
    this.kept.push([ms, chars]);
    this.newest = null;
    if (this.kept.length > MOST) {
      // MOST + 1 points, an odd count: the even indices keep the first and the newest.
      this.kept = this.kept.filter((_, i) => i % 2 === 0);
      this.spacing *= 2;
    }
  }

  points(): [number, number][] {
    return this.newest ? [...this.kept, this.newest] : [...this.kept];
  }
}
