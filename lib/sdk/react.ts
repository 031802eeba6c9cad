"use client";
/**
 * React bindings (`genserve/react`): `useObjectStream`, a streamed object run's live state as the
 * AI SDK's `useObject` gives it — `submit(input)`, the typed partial `object`, `isLoading`,
 * `error`, `stop()` — and `genserveProxy`, the route handler that keeps the key on the server.
 * Browser-safe.
 */
import { useEffect, useMemo, useRef, useSyncExternalStore } from "react";
import { createClient, type ClientOptions, type GenserveClient } from "./client";
import type { RunMetadata } from "./operations";
import type { DeepPartial, InferObject, SchemaInput } from "./schema-input";
import { ObjectStreamState, type ObjectStreamStateOptions, type SubmitInput } from "./stream-state";

export { genserveProxy, type ProxyOptions } from "./proxy";
export { ObjectStreamState, type ObjectStreamSnapshot, type SubmitInput } from "./stream-state";

export interface UseObjectStreamOptions<S extends SchemaInput | undefined> extends ObjectStreamStateOptions<S> {
  /** A client to use; or the `baseURL` (and, server-side only, the key) to make one. */
  client?: GenserveClient;
  baseURL?: string;
  apiKey?: string;
  fetch?: ClientOptions["fetch"];
  headers?: ClientOptions["headers"];
}

export interface UseObjectStream<T> {
  /** Starts a run with this input (stopping one in progress). */
  submit: (input: SubmitInput) => Promise<void>;
  /** The object so far: every field optional while it streams; the whole object when done. */
  object: DeepPartial<T> | undefined;
  isLoading: boolean;
  error: Error | undefined;
  /** Stops the stream (and cancels its run on the server unless `cancelOnStop: false`). */
  stop: () => void;
  runId: string | undefined;
  metadata: RunMetadata | undefined;
}

/**
 * A streamed object run's live state, typed from `schema`.
 *
 * @example
 * ```tsx
 * "use client";
 * import { useObjectStream } from "genserve/react";
 * import { z } from "zod";
 *
 * const Invoice = z.object({ number: z.string(), lines: z.array(z.object({ description: z.string() })) });
 *
 * export function Extract() {
 *   const { submit, object, isLoading, error, stop } = useObjectStream({ baseURL: "/api/genserve", workflow: "extract-invoice", schema: Invoice });
 *   return (
 *     <>
 *       <button onClick={() => submit("Invoice INV-7 ...")} disabled={isLoading}>Extract</button>
 *       {isLoading && <button onClick={stop}>Stop</button>}
 *       <p>{object?.number}</p>
 *       <ul>{object?.lines?.map((line, i) => <li key={i}>{line?.description}</li>)}</ul>
 *       {error && <p role="alert">{error.message}</p>}
 *     </>
 *   );
 * }
 * ```
 */
export function useObjectStream<S extends SchemaInput | undefined = undefined>(options: UseObjectStreamOptions<S>): UseObjectStream<InferObject<S>> {
  const { client: given, baseURL = "", apiKey, fetch, headers } = options;
  const client = useMemo(() => given ?? createClient({ baseURL, apiKey, fetch, headers }), [given, baseURL, apiKey, fetch, headers]);
  const state = useRef<ObjectStreamState<S> | null>(null);
  if (state.current === null || state.current.client !== client) state.current = new ObjectStreamState(client, options);
  // The latest callbacks and settings, without restarting anything.
  state.current.options = options;
  const current = state.current;
  const snapshot = useSyncExternalStore(current.subscribe, current.getSnapshot, current.getSnapshot);
  // Leaving the page (unmounting) stops the stream.
  useEffect(() => () => current.stop(), [current]);
  return { ...snapshot, submit: current.submit, stop: current.stop };
}
