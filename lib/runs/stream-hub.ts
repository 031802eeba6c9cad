import "server-only";
import type { RunMetadata } from "../domain/runs";
import type { ProblemBody } from "../errors";

/** One event of a streamed run. `seq` counts every event of the run from 1 (the SSE `id:`). */
export type StreamEvent =
  | { seq: number; kind: "item"; text: string }
  | { seq: number; kind: "restart"; attempt: number }
  | { seq: number; kind: "done"; payload: { runId: string; object: unknown; metadata: RunMetadata } }
  | { seq: number; kind: "error"; problem: ProblemBody };

type Body<E> = E extends StreamEvent ? Omit<E, "seq"> : never;
export type NewStreamEvent = Body<StreamEvent>;

interface RunStream {
  keyId: string;
  events: StreamEvent[];
  ended: boolean;
  endedAt: number;
  wake: Set<() => void>;
}

/**
 * Keeps each streamed run's events while it runs and for `retainMs` after it ends, so a client
 * that lost its connection can resume from its Last-Event-ID and lose nothing. In-process: a
 * resume must reach the process that ran the stream.
 */
export class StreamHub {
  private readonly runs = new Map<string, RunStream>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly retainMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, Math.max(1_000, retainMs / 4)));
    this.sweeper.unref();
  }

  open(runId: string, keyId: string): { push(event: NewStreamEvent): void; end(): void } {
    const stream: RunStream = { keyId, events: [], ended: false, endedAt: 0, wake: new Set() };
    this.runs.set(runId, stream);
    const notify = () => {
      for (const wake of stream.wake) wake();
      stream.wake.clear();
    };
    return {
      push: (event) => {
        if (stream.ended) return;
        stream.events.push({ ...event, seq: stream.events.length + 1 } as StreamEvent);
        if (event.kind === "done" || event.kind === "error") {
          stream.ended = true;
          stream.endedAt = this.now();
        }
        notify();
      },
      end: () => {
        if (!stream.ended) {
          stream.ended = true;
          stream.endedAt = this.now();
        }
        notify();
      },
    };
  }

  /** The run's owner, or null when this process holds no stream for it (any more). */
  owner(runId: string): string | null {
    return this.runs.get(runId)?.keyId ?? null;
  }

  /** Events after `afterSeq`, then live ones until the run's final event; ends early on `signal`. */
  async *follow(runId: string, afterSeq: number, signal?: AbortSignal): AsyncGenerator<StreamEvent> {
    const stream = this.runs.get(runId);
    if (!stream) return;
    let next = afterSeq;
    for (;;) {
      while (next < stream.events.length) yield stream.events[next++]!;
      if (stream.ended || signal?.aborted) return;
      await new Promise<void>((resolve) => {
        stream.wake.add(resolve);
        signal?.addEventListener("abort", () => resolve(), { once: true });
      });
    }
  }

  sweep(): void {
    const cutoff = this.now() - this.retainMs;
    for (const [runId, stream] of this.runs) if (stream.ended && stream.endedAt <= cutoff) this.runs.delete(runId);
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}
