"use client";

import { useCallback, useEffect, useRef, useState } from "react";
import type { RunMetadata } from "@/lib/domain/runs";
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
  /** The value so far; while streaming, refreshed at most every SNAPSHOT_MS (it costs a copy of the whole value). */
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

/** While streaming, the partial value is copied out of the parser at most this often. */
const SNAPSHOT_MS = 250;
/**
 * While streaming, React is told at most this often (in an animation frame): each update re-renders
 * the playground around the output too, and a model faster than the screen needs no more to be
 * followed by eye. Starts, restarts and ends are told at once.
 */
const PUBLISH_MS = 100;

/**
 * Runs one operation against the API and exposes its live state. Stream deltas go into an
 * incremental parser and an incremental layout (PrettyLines), with work proportional to each delta;
 * React sees the first item at once, then at most one update per PUBLISH_MS (in an animation
 * frame) however fast they come; the partial value
 * (a copy of the whole) is taken at most every SNAPSHOT_MS and when the stream ends.
 */
export function useRun(client: ApiClient | null) {
  const [state, setState] = useState<RunState>(idleRun);
  const abortRef = useRef<AbortController | null>(null);
  const live = useRef<RunState>(idleRun());
  const frame = useRef<number | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const publishedAt = useRef(0);
  const parserRef = useRef<PartialJsonParser | null>(null);
  const snapshotAt = useRef(0);

  const publish = useCallback((now = false) => {
    const flush = () => {
      frame.current = null;
      publishedAt.current = performance.now();
      const parser = parserRef.current;
      const t = performance.now();
      if (parser && live.current.status === "running" && (now || t - snapshotAt.current >= SNAPSHOT_MS || live.current.snapshot?.value === undefined)) {
        snapshotAt.current = t;
        live.current.snapshot = parser.snapshot();
      }
      setState({ ...live.current, docVersion: live.current.doc?.version ?? 0 });
    };
    if (now) {
      if (frame.current !== null) cancelAnimationFrame(frame.current);
      if (timer.current !== null) clearTimeout(timer.current);
      timer.current = null;
      flush();
    } else if (frame.current === null && timer.current === null) {
      const wait = publishedAt.current + PUBLISH_MS - performance.now();
      if (wait <= 0) frame.current = requestAnimationFrame(flush);
      else
        timer.current = setTimeout(() => {
          timer.current = null;
          frame.current = requestAnimationFrame(flush);
        }, wait);
    }
  }, []);

  useEffect(
    () => () => {
      abortRef.current?.abort();
      if (timer.current !== null) clearTimeout(timer.current);
      if (frame.current !== null) cancelAnimationFrame(frame.current);
    },
    [],
  );

  const start = useCallback(
    async (operation: Operation, body: Record<string, unknown>) => {
      if (!client) return;
      abortRef.current?.abort();
      const controller = new AbortController();
      abortRef.current = controller;
      live.current = { ...idleRun(), status: "running", operation, workflowSlug: typeof body.workflowSlug === "string" ? body.workflowSlug : null, startedAt: performance.now() };
      publish(true);
      parserRef.current = null;
      // A run replaced by another (or reset) writes nothing more: its late events and its abort
      // belong to no run on screen.
      const stale = () => abortRef.current !== controller;
      const finish = (patch: Partial<RunState>) => {
        if (stale()) return;
        // What had arrived when a stream stopped is the partial value (a failed or cancelled run shows it).
        if (parserRef.current && live.current.status === "running" && patch.status !== "done") live.current.snapshot = parserRef.current.snapshot();
        parserRef.current = null;
        live.current = { ...live.current, ...patch, finishedAt: performance.now() };
        publish(true);
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
          live.current.runId = runId;
          const attempt = () => {
            const closedSet = new Set<string>();
            const parser = new PartialJsonParser((path) => closedSet.add(path));
            parserRef.current = parser;
            return { parser, closedSet, doc: new PrettyLines() };
          };
          let current = attempt();
          live.current = { ...live.current, doc: current.doc, closedSet: current.closedSet, closed: current.parser.closed };
          let ended = false;
          for await (const event of events) {
            if (stale()) return;
            if (event.type === "item") {
              const first = live.current.firstItemAt === null;
              live.current.firstItemAt ??= performance.now();
              live.current.deltas.push(event.text);
              live.current.streamedChars += event.text.length;
              current.parser.push(event.text);
              current.doc.push(event.text);
              live.current.parseError = current.parser.error;
              publish(first);
            } else if (event.type === "restart") {
              current = attempt();
              live.current = { ...live.current, deltas: [], streamedChars: 0, closed: current.parser.closed, closedSet: current.closedSet, doc: current.doc, snapshot: null, parseError: null, restarts: live.current.restarts + 1 };
              publish(true);
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
    },
    [client, publish],
  );

  const cancel = useCallback(() => {
    const runId = live.current.status === "running" ? live.current.runId : null;
    abortRef.current?.abort();
    // The server stops the run wherever it executes (its id is known once a stream started); best
    // effort: a run that ended meanwhile answers 409, which is no news to show.
    if (runId && client) void client.cancelRun(runId).catch(() => undefined);
  }, [client]);
  /** Forgets the run (cancelling it if it is still going): its result no longer belongs on screen. */
  const reset = useCallback(() => {
    const controller = abortRef.current;
    abortRef.current = null;
    controller?.abort();
    live.current = idleRun();
    publish(true);
  }, [publish]);
  return { state, start, cancel, reset };
}
