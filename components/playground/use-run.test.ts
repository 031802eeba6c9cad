import { describe, expect, it } from "vitest";
import { ApiError, type ApiClient, type StreamEvent } from "@/lib/client/api";
import type { RunMetadata } from "@/lib/domain/run-vocabulary";
import { RunStore, runPhase, runSelection, runToDraw, type RunState } from "./use-run";

/** A stream the test feeds event by event. */
function channel() {
  const queue: StreamEvent[] = [];
  let wake: (() => void) | null = null;
  let closed = false;
  let failure: Error | null = null;
  async function* events(): AsyncIterable<StreamEvent> {
    for (;;) {
      if (failure) throw failure;
      if (queue.length) yield queue.shift()!;
      else if (closed) return;
      else await new Promise<void>((resolve) => (wake = resolve));
    }
  }
  const poke = () => {
    wake?.();
    wake = null;
  };
  return {
    events: events(),
    send(event: StreamEvent) {
      queue.push(event);
      poke();
    },
    close() {
      closed = true;
      poke();
    },
    /** As a fetch body does when its request is aborted. */
    fail(error: Error) {
      failure = error;
      poke();
    },
  };
}

function streamingClient(feed: ReturnType<typeof channel>, cancelled: string[] = []): ApiClient {
  return {
    streamObject: async (_body: unknown, signal?: AbortSignal) => {
      signal?.addEventListener("abort", () => feed.fail(new DOMException("aborted", "AbortError")));
      return { runId: "run_1", events: feed.events };
    },
    /** POST /runs/{id}/cancel: recorded; answers 409 as for a run that ended meanwhile (no news to show). */
    cancelRun: async (runId: string) => {
      cancelled.push(runId);
      throw new ApiError(409, "run_finished", "The run had ended.");
    },
  } as unknown as ApiClient;
}

/** Resolves with the first published run that satisfies `ok` (now or later); counts publications meanwhile. */
function until(store: RunStore, ok: (run: RunState) => boolean): Promise<RunState> {
  return new Promise((resolve) => {
    if (ok(store.getSnapshot())) return resolve(store.getSnapshot());
    const stop = store.subscribe(() => {
      if (!ok(store.getSnapshot())) return;
      stop();
      resolve(store.getSnapshot());
    });
  });
}

describe("a run's store (issue 39: a streamed delta re-renders the output, not the composer)", () => {
  it("publishes each stream's progress to its readers while the composer's part (runPhase) stays the same object", async () => {
    const feed = channel();
    const store = new RunStore(streamingClient(feed));
    let publications = 0;
    store.subscribe(() => publications++);
    const phase = runSelection(store, runPhase);
    const output = runSelection(store, (run) => run.docVersion, Object.is);

    const done = store.start("stream-object", { workflowSlug: "w" });
    const text = JSON.stringify({ items: Array.from({ length: 40 }, (_, i) => `item ${i}`) });
    const deltas = text.match(/.{1,8}/g)!;
    feed.send({ type: "item", id: 0, text: deltas[0]! });
    const first = await until(store, (run) => run.streamedChars > 0);
    expect(first.status).toBe("running");
    const during = phase();
    expect(during).toEqual({ status: "running", operation: "stream-object", runId: "run_1", error: null });

    // Delta after delta, each waited for until it is published: the output's view moves every time.
    const versions = new Set<number>();
    const seenAt = publications;
    let sent = 8;
    for (let i = 1; i < deltas.length; i++) {
      feed.send({ type: "item", id: i, text: deltas[i]! });
      sent += deltas[i]!.length;
      if (i % 10 === 0 || i === deltas.length - 1) {
        const at = sent;
        await until(store, (run) => run.streamedChars === at);
        versions.add(output());
        expect(phase()).toBe(during);
      }
    }
    expect(publications - seenAt).toBeGreaterThanOrEqual(3);
    expect(versions.size).toBeGreaterThanOrEqual(3);
    expect(store.getSnapshot().doc?.count).toBeGreaterThan(40);
    // No copy of the whole value per publication while it streams (the live views read `doc`).
    expect(store.getSnapshot().snapshot).toBeNull();

    feed.send({ type: "done", runId: "run_1", object: JSON.parse(text), metadata: { runId: "run_1" } as RunMetadata });
    feed.close();
    await done;
    expect(phase()).not.toBe(during);
    expect(phase().status).toBe("done");
    expect(store.getSnapshot().object).toEqual(JSON.parse(text));
  });

  it("cancel() ends a stream as cancelled with what had arrived; reset() forgets it and later events are ignored", async () => {
    const feed = channel();
    const cancelled: string[] = [];
    const store = new RunStore(streamingClient(feed, cancelled));
    const done = store.start("stream-object", { workflowSlug: "w" });
    feed.send({ type: "item", id: 0, text: '{"a": 1, "b"' });
    await until(store, (run) => run.streamedChars > 0);
    store.cancel();
    await done;
    expect(store.getSnapshot()).toMatchObject({ status: "cancelled", snapshot: { value: { a: 1 } } });
    // The server is asked to stop the run too (its answer, here a 409, is not shown).
    expect(cancelled).toEqual(["run_1"]);
    expect(store.getSnapshot().error).toBeNull();

    const again = channel();
    store.client = streamingClient(again);
    const second = store.start("stream-object", { workflowSlug: "w" });
    again.send({ type: "item", id: 0, text: '{"a"' });
    await until(store, (run) => run.streamedChars > 0);
    store.reset();
    again.send({ type: "error", error: new ApiError(500, "upstream_failed", "late") });
    again.close();
    await second;
    expect(store.getSnapshot()).toMatchObject({ status: "idle", streamedChars: 0, error: null });
  });
});

describe("runToDraw (a stream's batches drawn at transition priority, its start and end at once)", () => {
  it("draws the deferred state only while the same stream's attempt runs in both", async () => {
    const feed = channel();
    const store = new RunStore(streamingClient(feed));
    const idle = store.getSnapshot();
    const done = store.start("stream-object", { workflowSlug: "w" });
    const started = store.getSnapshot();
    // A start is drawn at once (the deferred state is still the idle run).
    expect(runToDraw(started, idle)).toBe(started);
    feed.send({ type: "item", id: 0, text: '{"a":' });
    const first = await until(store, (run) => run.streamedChars > 0);
    feed.send({ type: "item", id: 1, text: "1," });
    const later = await until(store, (run) => run.streamedChars > first.streamedChars);
    // A newer batch of the same stream may wait: the state drawn last stays until React gets to it.
    expect(runToDraw(later, first)).toBe(first);
    expect(runToDraw(later, later)).toBe(later);
    // A restart (a new attempt, a new document) is drawn at once.
    feed.send({ type: "restart", attempt: 2 });
    const restarted = await until(store, (run) => run.restarts === 1);
    expect(runToDraw(restarted, later)).toBe(restarted);
    // So is the end: Done never waits behind a batch.
    feed.send({ type: "done", runId: "run_1", object: { a: 1 }, metadata: { runId: "run_1" } as RunMetadata });
    feed.close();
    await done;
    const ended = store.getSnapshot();
    expect(ended.status).toBe("done");
    expect(runToDraw(ended, restarted)).toBe(ended);
  });
});
