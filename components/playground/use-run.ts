"use client";

import { useEffect, useMemo, useState, useSyncExternalStore } from "react";
import type { RunMetadata } from "@/lib/domain/run-vocabulary";
import { ApiError, type ApiClient } from "@/lib/client/api";
import type { Operation } from "@/lib/client/composition";
import { PartialJsonParser, type PartialSnapshot } from "@/lib/json/partial";
import { PrettyLines } from "@/lib/json/pretty-lines";

export interface RunState {
  status: "idle" | "running" | "done" | "error" | "cancelled";
  operation: Operation | null;
  /** The workflow the run was asked for, as given (`slug`, `slug@4`). */
  workflowSlug: string | null;
  runId: string | null;
  startedAt: number | null;
  firstItemAt: number | null;
  finishedAt: number | null;
  /**
   * Stream: the raw deltas of the current attempt (append-only and shared between published
   * states, like `doc` and `closedSet`: a new attempt gets new ones), how many characters they
   * hold, and how many attempts were restarted.
   */
  deltas: string[];
  streamedChars: number;
  restarts: number;
  /**
   * Stream: the value as far as it went, copied out of the parser when the stream stops (a copy of
   * the whole value: never per delta; while it streams the live views draw from `doc`).
   */
  snapshot: PartialSnapshot | null;
  closed: string[];
  closedSet: Set<string>;
  /** Stream: the current attempt's text laid out as it arrives (the output views draw from it), and its version when published. */
  doc: PrettyLines | null;
  docVersion: number;
  parseError: string | null;
  object: unknown;
  text: string | null;
  metadata: RunMetadata | null;
  error: ApiError | null;
}

/** A run not started, with arrays and sets of its own (a run appends to them: shared, one run's deltas would show under the next). */
export const idleRun = (): RunState => ({
  status: "idle",
  operation: null,
  workflowSlug: null,
  runId: null,
  startedAt: null,
  firstItemAt: null,
  finishedAt: null,
  deltas: [],
  streamedChars: 0,
  restarts: 0,
  snapshot: null,
  closed: [],
  closedSet: new Set(),
  doc: null,
  docVersion: 0,
  parseError: null,
  object: undefined,
  text: null,
  metadata: null,
  error: null,
});

/**
 * While streaming, subscribers are told at most this often (in an animation frame): a model faster
 * than the screen needs no more to be followed by eye. Starts, restarts and ends are told at once.
 */
const PUBLISH_MS = 100;

/** The next animation frame (a timer where there are none, as in tests); returns its cancel. */
function nextFrame(callback: () => void): () => void {
  if (typeof requestAnimationFrame === "function") {
    const id = requestAnimationFrame(callback);
    return () => cancelAnimationFrame(id);
  }
  const id = setTimeout(callback, 0);
  return () => clearTimeout(id);
}

/**
 * One run against the API, held outside React: an external store (`subscribe`, `getSnapshot`) that
 * only what shows the run reads (the result panels, the status chip, through `useRunState`), while
 * the composer reads the few fields that change at a start or an end (`useRunSelector`), so a
 * streamed delta re-renders the output and not the editors around it.
 *
 * Stream deltas go into an incremental parser and an incremental layout (PrettyLines), with work
 * proportional to each delta; subscribers see the first item at once, then at most one update per
 * PUBLISH_MS (in an animation frame) however fast they come. The partial value (a copy of the
 * whole) is taken only when the stream stops: nothing on screen reads it while it streams.
 */
export class RunStore {
  /** The client runs go through (the signed-in key's); set by `useRun` on every render. */
  client: ApiClient | null = null;
  private published: RunState = idleRun();
  private live: RunState = idleRun();
  private readonly listeners = new Set<() => void>();
  private controller: AbortController | null = null;
  private frame: (() => void) | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private publishedAt = 0;
  private parser: PartialJsonParser | null = null;

  constructor(client: ApiClient | null = null) {
    this.client = client;
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  /** The run as last published: a new object each time, the same one in between. */
  readonly getSnapshot = (): RunState => this.published;

  private flush = () => {
    this.frame = null;
    this.publishedAt = performance.now();
    this.published = { ...this.live, docVersion: this.live.doc?.version ?? 0 };
    for (const listener of [...this.listeners]) listener();
  };

  private publish(now = false) {
    if (now) {
      this.frame?.();
      this.frame = null;
      if (this.timer !== null) clearTimeout(this.timer);
      this.timer = null;
      this.flush();
    } else if (this.frame === null && this.timer === null) {
      const wait = this.publishedAt + PUBLISH_MS - performance.now();
      if (wait <= 0) this.frame = nextFrame(this.flush);
      else
        this.timer = setTimeout(() => {
          this.timer = null;
          this.frame = nextFrame(this.flush);
        }, wait);
    }
  }

  readonly start = async (operation: Operation, body: Record<string, unknown>): Promise<void> => {
    const client = this.client;
    if (!client) return;
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    this.parser = null;
    this.live = { ...idleRun(), status: "running", operation, workflowSlug: typeof body.workflowSlug === "string" ? body.workflowSlug : null, startedAt: performance.now() };
    this.publish(true);
    // A run replaced by another (or reset) writes nothing more: its late events and its abort
    // belong to no run on screen.
    const stale = () => this.controller !== controller;
    const finish = (patch: Partial<RunState>) => {
      if (stale()) return;
      // What had arrived when a stream stopped is the partial value (a failed or cancelled run shows it).
      if (this.parser && this.live.status === "running" && patch.status !== "done") this.live.snapshot = this.parser.snapshot();
      this.parser = null;
      this.live = { ...this.live, ...patch, finishedAt: performance.now() };
      this.publish(true);
    };
    try {
      if (operation === "generate-object") {
        const result = await client.generateObject(body as never, controller.signal);
        finish({ status: "done", object: result.object, metadata: result.metadata, runId: result.metadata.runId });
      } else if (operation === "generate-text") {
        const result = await client.generateText(body as never, controller.signal);
        finish({ status: "done", text: result.text, metadata: result.metadata, runId: result.metadata.runId });
      } else {
        const { runId, events } = await client.streamObject(body as never, controller.signal);
        if (stale()) return;
        this.live.runId = runId;
        const attempt = () => {
          const closedSet = new Set<string>();
          const parser = new PartialJsonParser((path) => closedSet.add(path));
          this.parser = parser;
          return { parser, closedSet, doc: new PrettyLines() };
        };
        let current = attempt();
        this.live = { ...this.live, doc: current.doc, closedSet: current.closedSet, closed: current.parser.closed };
        let ended = false;
        for await (const event of events) {
          if (stale()) return;
          const live = this.live;
          if (event.type === "item") {
            const first = live.firstItemAt === null;
            live.firstItemAt ??= performance.now();
            live.deltas.push(event.text);
            live.streamedChars += event.text.length;
            current.parser.push(event.text);
            current.doc.push(event.text);
            live.parseError = current.parser.error;
            this.publish(first);
          } else if (event.type === "restart") {
            current = attempt();
            this.live = { ...live, deltas: [], streamedChars: 0, closed: current.parser.closed, closedSet: current.closedSet, doc: current.doc, snapshot: null, parseError: null, restarts: live.restarts + 1 };
            this.publish(true);
          } else if (event.type === "done") {
            ended = true;
            finish({ status: "done", object: event.object, metadata: event.metadata, snapshot: { value: event.object, streamingPath: null } });
          } else {
            ended = true;
            finish({ status: "error", error: event.error });
          }
        }
        if (!ended) finish({ status: "error", error: new ApiError(0, "stream_cut", "The stream ended without a final event (connection lost).") });
      }
    } catch (error) {
      if (controller.signal.aborted) finish({ status: "cancelled" });
      else finish({ status: "error", error: error instanceof ApiError ? error : new ApiError(0, "network", (error as Error).message) });
    }
  };

  /** Stops the run; it ends as cancelled, with what had arrived. The one way a run is cancelled. */
  readonly cancel = (): void => {
    const runId = this.live.status === "running" ? this.live.runId : null;
    this.controller?.abort();
    // The server stops the run wherever it executes (its id is known once a stream started); best
    // effort: a run that ended meanwhile answers 409, which is no news to show.
    if (runId && this.client) void this.client.cancelRun(runId).catch(() => undefined);
  };

  /** Forgets the run (cancelling it if it is still going): its result no longer belongs on screen. */
  readonly reset = (): void => {
    const controller = this.controller;
    this.controller = null;
    controller?.abort();
    this.parser = null;
    this.live = idleRun();
    this.publish(true);
  };

  /** Stops the run and any pending publication (the playground went away). */
  dispose(): void {
    this.controller?.abort();
    this.controller = null;
    this.frame?.();
    this.frame = null;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}

/** A run store for this component's lifetime (its methods are stable: start, cancel, reset). */
export function useRun(client: ApiClient | null): RunStore {
  const [store] = useState(() => new RunStore(client));
  useEffect(() => {
    store.client = client;
  }, [store, client]);
  useEffect(() => () => store.dispose(), [store]);
  return store;
}

/** The whole live run: re-renders the caller on every publication (the output, the status). */
export function useRunState(store: RunStore): RunState {
  return useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
}

/**
 * Which of a run's two states to draw: `deferred` (React's deferred copy of `now`, which lags while
 * a newer one waits to be drawn at transition priority) only while both are the same stream of the
 * same attempt running; a start, a restart and the end (Done, failed, cancelled) are drawn at once.
 */
export function runToDraw(now: RunState, deferred: RunState): RunState {
  const sameStream = now.status === "running" && deferred.status === "running" && now.startedAt === deferred.startedAt && now.restarts === deferred.restarts && now.doc === deferred.doc;
  return sameStream ? deferred : now;
}

/** Shallow equality of two plain objects (the same keys with the same values). */
export function shallowEqual<T>(a: T, b: T): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  const keys = Object.keys(a) as (keyof T)[];
  return keys.length === Object.keys(b).length && keys.every((k) => Object.is(a[k], b[k]));
}

/**
 * A reader of part of the run, chosen by `select` (a function defined once, outside components):
 * it answers the same value (the same object) until that part changes (`equal`, shallow by default),
 * whatever else the run publishes meanwhile.
 */
export function runSelection<T>(store: RunStore, select: (run: RunState) => T, equal: (a: T, b: T) => boolean = shallowEqual): () => T {
  let last: { run: RunState; value: T } | null = null;
  return () => {
    const run = store.getSnapshot();
    if (last && last.run === run) return last.value;
    const value = select(run);
    last = { run, value: last && equal(last.value, value) ? last.value : value };
    return last.value;
  };
}

/** Part of the run (see runSelection): the caller re-renders only when that part changes, not on every delta. */
export function useRunSelector<T>(store: RunStore, select: (run: RunState) => T, equal: (a: T, b: T) => boolean = shallowEqual): T {
  const get = useMemo(() => runSelection(store, select, equal), [store, select, equal]);
  return useSyncExternalStore(store.subscribe, get, get);
}

/** What changes only when a run starts or ends: all the composer and the toolbar need of it. */
export interface RunPhase {
  status: RunState["status"];
  operation: RunState["operation"];
  runId: string | null;
  error: ApiError | null;
}

export const runPhase = (run: RunState): RunPhase => ({ status: run.status, operation: run.operation, runId: run.runId, error: run.error });
