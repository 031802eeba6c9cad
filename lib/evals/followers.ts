import "server-only";
import type { Logger } from "pino";
import type { EvaluationTarget, EvaluationTotals, SuiteDocument } from "../api/suite-shapes";
import type { EvaluationItemRecord, EvaluationRecord, EvaluationStatus, Store } from "../store/store-types";
import type { SuiteSnapshots } from "./snapshots";

/** Counts of the results so far, as a progress event carries them. */
export interface Progress {
  done: number;
  passed: number;
  failed: number;
  errors: number;
  total: number;
}

/** What one follower of an evaluation is told, in order. */
export interface FollowerSink {
  /** A case result: its order of recording, and its JSON as the stream sends it. */
  result(seq: number, data: string): void;
  /** After results: the counts up to the last one. */
  progress(progress: Progress): void;
  /** The evaluation ended (null: it is gone); nothing follows. */
  end(evaluation: EvaluationRecord | null, totals: EvaluationTotals | null): void;
}

export interface FollowersDeps {
  store: Pick<Store, "evaluations">;
  snapshots: SuiteSnapshots;
  /** An ended evaluation's totals (stored when it ended; a cancelled one's from its results). */
  totals(evaluation: EvaluationRecord, document: SuiteDocument): Promise<EvaluationTotals>;
  logger: Logger;
  /** How often a reader looks for results recorded by other processes (this one's wake it at once). */
  pollMs?: number;
  /** Results a reader keeps to start late followers from memory: at most this many, and this many bytes of their JSON. */
  recent?: { results: number; bytes: number };
}

const ENDED: readonly EvaluationStatus[] = ["completed", "cancelled", "failed"];
const RECENT = { results: 1_000, bytes: 1024 * 1024 };

interface Follower {
  /** Results up to this one were sent (or the follower had them: its Last-Event-ID). */
  after: number;
  sink: FollowerSink;
}

/** The one reader of an evaluation in this process, shared by all its followers here. */
interface Reader {
  evaluation: EvaluationRecord;
  document: SuiteDocument | null;
  live: Set<Follower>;
  /** Followers waiting for the reader to start them (it had not started, or they need older results than it keeps). */
  joining: Follower[];
  /** The last result read, and the counts up to it. */
  seq: number;
  counts: Omit<Progress, "total">;
  /** The latest results read, and the result before the oldest of them (every later one is here). */
  recent: { seq: number; data: string }[];
  recentBytes: number;
  floor: number;
  woken: boolean;
  wake: () => void;
}

/**
 * Followers of evaluations' progress (GET /api/v1/evaluations/{id}/events), sharing one reader per
 * evaluation per process: however many follow it, the reader reads the status row and the results
 * recorded since its last one — once per wake (a result recorded here) or poll — and hands each
 * result to every follower. The suite is read once per reader (for case names and the total).
 * Followers that join late start from the results it keeps in memory, or from storage when they
 * resume from older results than those.
 */
export class EvaluationFollowers {
  private readonly readers = new Map<string, Reader>();

  constructor(private readonly deps: FollowersDeps) {}

  /** Follows `evaluation` from after result `after`; the returned function stops following. */
  follow(evaluation: EvaluationRecord, after: number, sink: FollowerSink): () => void {
    let reader = this.readers.get(evaluation.id);
    const created = !reader;
    if (!reader) {
      const fresh: Reader = {
        evaluation,
        document: null,
        live: new Set(),
        joining: [],
        seq: 0,
        counts: { done: 0, passed: 0, failed: 0, errors: 0 },
        recent: [],
        recentBytes: 0,
        floor: 0,
        woken: false,
        wake: () => void (fresh.woken = true),
      };
      reader = fresh;
      this.readers.set(evaluation.id, reader);
    }
    const follower: Follower = { after, sink };
    if (reader.document !== null && after >= reader.floor) this.start(reader, follower);
    else {
      reader.joining.push(follower);
      reader.wake();
    }
    // Started once it has a follower: a reader with none stops.
    if (created) void this.read(reader);
    const current = reader;
    return () => {
      current.live.delete(follower);
      const i = current.joining.indexOf(follower);
      if (i >= 0) current.joining.splice(i, 1);
      current.wake();
    };
  }

  /** Wakes the evaluation's reader, if it has one here: something changed. */
  wake(id: string): void {
    this.readers.get(id)?.wake();
  }

  /** Starts a follower from the results the reader keeps (every one after its position is among them). */
  private start(reader: Reader, follower: Follower): void {
    let sent = false;
    for (const result of reader.recent) {
      if (result.seq <= follower.after) continue;
      follower.sink.result(result.seq, result.data);
      sent = true;
    }
    if (sent) follower.sink.progress(this.progress(reader));
    follower.after = Math.max(follower.after, reader.seq);
    reader.live.add(follower);
  }

  private progress(reader: Reader): Progress {
    return { ...reader.counts, total: reader.document!.cases.length * (reader.evaluation.target as EvaluationTarget).repeat };
  }

  private async read(reader: Reader): Promise<void> {
    const { store } = this.deps;
    const id = reader.evaluation.id;
    const pollMs = this.deps.pollMs ?? 1_000;
    while (reader.live.size > 0 || reader.joining.length > 0) {
      reader.woken = false;
      try {
        reader.document ??= await this.deps.snapshots.document(reader.evaluation.snapshotId);
        for (const follower of reader.joining.splice(0)) await this.catchUp(reader, follower);
        // The status first: results recorded before an end are all read below.
        const current = await store.evaluations.get(id);
        this.dispatch(reader, await store.evaluations.items(id, reader.seq));
        if (!current || ENDED.includes(current.status)) {
          const totals = current ? await this.deps.totals(current, reader.document) : null;
          this.readers.delete(id);
          for (const follower of [...reader.live, ...reader.joining]) follower.sink.end(current, totals);
          return;
        }
      } catch (error) {
        this.deps.logger.warn({ err: { message: (error as Error).message }, evaluationId: id }, "reading an evaluation's progress failed; will retry");
      }
      if (!reader.woken) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pollMs);
          reader.wake = () => {
            reader.woken = true;
            clearTimeout(timer);
            resolve();
          };
        });
        reader.wake = () => void (reader.woken = true);
      }
    }
    // Nobody follows any more (checked with no wait since, so no follower joined in between).
    this.readers.delete(id);
  }

  /** A follower that needs results the reader does not keep: those read from storage, up to where the reader is. */
  private async catchUp(reader: Reader, follower: Follower): Promise<void> {
    if (follower.after >= reader.floor) return this.start(reader, follower);
    let sent = false;
    for (const item of await this.deps.store.evaluations.items(reader.evaluation.id, follower.after)) {
      if (item.seq > reader.seq) break;
      follower.sink.result(item.seq, this.resultData(reader, item));
      sent = true;
    }
    if (sent) follower.sink.progress(this.progress(reader));
    follower.after = Math.max(follower.after, reader.seq);
    reader.live.add(follower);
  }

  /** New results: counted, kept, and handed to every follower that has not had them. */
  private dispatch(reader: Reader, items: readonly EvaluationItemRecord[]): void {
    if (items.length === 0) return;
    const keep = this.deps.recent ?? RECENT;
    const fresh: { seq: number; data: string }[] = [];
    for (const item of items) {
      reader.counts.done++;
      reader.counts[item.status === "passed" ? "passed" : item.status === "failed" ? "failed" : "errors"]++;
      reader.seq = item.seq;
      const result = { seq: item.seq, data: this.resultData(reader, item) };
      fresh.push(result);
      reader.recent.push(result);
      reader.recentBytes += result.data.length;
      while (reader.recent.length > keep.results || reader.recentBytes > keep.bytes) {
        const dropped = reader.recent.shift()!;
        reader.recentBytes -= dropped.data.length;
        reader.floor = dropped.seq;
      }
    }
    const progress = this.progress(reader);
    for (const follower of reader.live) {
      let sent = false;
      for (const result of fresh) {
        if (result.seq <= follower.after) continue;
        follower.sink.result(result.seq, result.data);
        sent = true;
      }
      follower.after = Math.max(follower.after, reader.seq);
      if (sent) follower.sink.progress(progress);
    }
  }

  private resultData(reader: Reader, item: EvaluationItemRecord): string {
    const failing = (item.checks as { pass: boolean }[]).filter((c) => !c.pass);
    return JSON.stringify({
      case: reader.document!.cases[item.caseIndex]?.name,
      caseIndex: item.caseIndex,
      repeat: item.repeat,
      runId: item.runId,
      status: item.status,
      durationMs: item.durationMs,
      failing,
      error: item.error && { code: item.error.code, detail: item.error.detail },
    });
  }
}
