"use client";

import { useCallback, useEffect, useRef, useState } from "react";
import type { RunMetadata } from "@/lib/domain/runs";
import { ApiError, type ApiClient } from "@/lib/client/api";
import type { Operation } from "@/lib/client/composition";
import { PartialJsonParser, type PartialSnapshot } from "@/lib/json/partial";

export interface RunState {
  status: "idle" | "running" | "done" | "error" | "cancelled";
  operation: Operation | null;
  /** The workflow the run was asked for, as given (`slug`, `slug@4`). */
  workflowSlug: string | null;
  runId: string | null;
  startedAt: number | null;
  firstItemAt: number | null;
  finishedAt: number | null;
  /** Stream: the raw deltas of the current attempt, and how many attempts were restarted. */
  deltas: string[];
  restarts: number;
  snapshot: PartialSnapshot | null;
  closed: string[];
  parseError: string | null;
  object: unknown;
  text: string | null;
  metadata: RunMetadata | null;
  error: ApiError | null;
}

const IDLE: Readonly<RunState> = {
  status: "idle",
  operation: null,
  workflowSlug: null,
  runId: null,
  startedAt: null,
  firstItemAt: null,
  finishedAt: null,
  deltas: [],
  restarts: 0,
  snapshot: null,
  closed: [],
  parseError: null,
  object: undefined,
  text: null,
  metadata: null,
  error: null,
};

/**
 * Runs one operation against the API and exposes its live state. Stream deltas go into an
 * incremental parser; React sees at most one update per animation frame however fast they come.
 */
export function useRun(client: ApiClient | null) {
  const [state, setState] = useState<RunState>(IDLE);
  const abortRef = useRef<AbortController | null>(null);
  const live = useRef<RunState>(IDLE);
  const frame = useRef<number | null>(null);

  const publish = useCallback((now = false) => {
    const flush = () => {
      frame.current = null;
      setState({ ...live.current, deltas: [...live.current.deltas], closed: [...live.current.closed] });
    };
    if (now) {
      if (frame.current !== null) cancelAnimationFrame(frame.current);
      flush();
    } else if (frame.current === null) {
      frame.current = requestAnimationFrame(flush);
    }
  }, []);

  useEffect(() => () => abortRef.current?.abort(), []);

  const start = useCallback(
    async (operation: Operation, body: Record<string, unknown>) => {
      if (!client) return;
      abortRef.current?.abort();
      const controller = new AbortController();
      abortRef.current = controller;
      // Fresh arrays: spreading IDLE alone would share its one `deltas` array between runs, each
      // run's deltas pushed after the last one's (three runs showed three JSON documents joined).
      live.current = { ...IDLE, deltas: [], closed: [], status: "running", operation, workflowSlug: typeof body.workflowSlug === "string" ? body.workflowSlug : null, startedAt: performance.now() };
      publish(true);
      // A run replaced by another (or reset) writes nothing more: its late events and its abort
      // belong to no run on screen.
      const stale = () => abortRef.current !== controller;
      const finish = (patch: Partial<RunState>) => {
        if (stale()) return;
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
          let parser = new PartialJsonParser();
          let ended = false;
          for await (const event of events) {
            if (stale()) return;
            if (event.type === "item") {
              live.current.firstItemAt ??= performance.now();
              live.current.deltas.push(event.text);
              parser.push(event.text);
              live.current.snapshot = parser.snapshot();
              live.current.closed = parser.closed;
              live.current.parseError = parser.error;
              publish();
            } else if (event.type === "restart") {
              parser = new PartialJsonParser();
              live.current = { ...live.current, deltas: [], closed: [], snapshot: null, parseError: null, restarts: live.current.restarts + 1 };
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

  const cancel = useCallback(() => abortRef.current?.abort(), []);
  /** Forgets the run (cancelling it if it is still going): its result no longer belongs on screen. */
  const reset = useCallback(() => {
    const controller = abortRef.current;
    abortRef.current = null;
    controller?.abort();
    live.current = { ...IDLE, deltas: [], closed: [] };
    publish(true);
  }, [publish]);
  return { state, start, cancel, reset };
}
