import "server-only";
import { GenserveError } from "../errors";
import type { SuiteDocument } from "../api/suite-shapes";
import type { Store } from "../store/store-types";

/** Parsed snapshots kept: each is immutable, and one suite version is usually what is being run and watched. */
const KEPT = 4;

/**
 * The suite documents evaluations ran, read from their stored snapshots. A snapshot never changes,
 * so this process parses each once while it is in use (the few most recent, up to `limits.suiteBytes`
 * each as JSON), and callers asking for one being read wait for that read instead of starting theirs.
 */
export class SuiteSnapshots {
  private readonly kept = new Map<string, Promise<SuiteDocument>>();

  constructor(private readonly store: Pick<Store, "evaluations">) {}

  document(snapshotId: string): Promise<SuiteDocument> {
    const found = this.kept.get(snapshotId);
    if (found) {
      // Most recently used last: the first in the map is the one to forget.
      this.kept.delete(snapshotId);
      this.kept.set(snapshotId, found);
      return found;
    }
    const read = this.store.evaluations.snapshot(snapshotId).then((snapshot) => {
      if (!snapshot) throw new GenserveError("suite_not_found", { detail: `The suite snapshot ${snapshotId} this evaluation ran is missing.` });
      return snapshot.document as SuiteDocument;
    });
    this.kept.set(snapshotId, read);
    // A failed read is not kept: the next caller tries again.
    read.catch(() => this.kept.get(snapshotId) === read && this.kept.delete(snapshotId));
    while (this.kept.size > KEPT) this.kept.delete(this.kept.keys().next().value!);
    return read;
  }
}
