"use client";

import { useCallback, useEffect, useMemo, useState, useSyncExternalStore } from "react";
import { emptyComposition, fromPermalinkHash, restoreComposition, type Composition } from "@/lib/client/composition";
import { SCHEMA_TEMPLATES } from "@/lib/client/templates";
import type { WorkflowDraft } from "@/lib/domain/drafts";
import { WORKFLOW_REF } from "@/lib/domain/names";
import { shallowEqual } from "./use-run";
import { useStoredList } from "./use-stored-list";

export const pretty = (value: unknown) => JSON.stringify(value, null, 2);

/** The composition but its input: all the composer draws from (typing in Input does not change it). */
export type Settings = Omit<Composition, "input">;

/**
 * The composition being edited, held outside React like a run (an external store): each part of
 * the page reads what it shows (`useCompositionSelector`), so a key press in Input re-renders the
 * Input and what follows from the input, not the toolbar, the prompt, the schema or the result. What
 * acts on the whole composition (Run, ⌘↵, Code, the permalink) reads it when it acts (`get`).
 */
export class CompositionStore {
  private listeners = new Set<() => void>();
  constructor(private current: Composition) {}

  readonly get = (): Composition => this.current;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  /** Replaces the composition, or derives the next one from the current (as React's setState). */
  readonly set = (next: Composition | ((prev: Composition) => Composition)): void => {
    const value = typeof next === "function" ? next(this.current) : next;
    if (value === this.current) return;
    this.current = value;
    for (const listener of this.listeners) listener();
  };

  readonly update = <K extends keyof Composition>(key: K, value: Composition[K]): void => this.set((prev) => (Object.is(prev[key], value) ? prev : { ...prev, [key]: value }));
}

/**
 * A reader of part of the composition, chosen by `select` (a function defined once, outside
 * components): it answers the same value (the same object) until that part changes (`equal`,
 * shallow by default), whatever else changes meanwhile.
 */
export function compositionSelection<T>(store: CompositionStore, select: (c: Composition) => T, equal: (a: T, b: T) => boolean = shallowEqual): () => T {
  let last: { c: Composition; value: T } | null = null;
  return () => {
    const c = store.get();
    if (last && last.c === c) return last.value;
    const value = select(c);
    last = { c, value: last && equal(last.value, value) ? last.value : value };
    return last.value;
  };
}

/** Part of the composition (see compositionSelection): the caller re-renders only when that part changes. */
export function useCompositionSelector<T>(store: CompositionStore, select: (c: Composition) => T, equal: (a: T, b: T) => boolean = shallowEqual): T {
  const get = useMemo(() => compositionSelection(store, select, equal), [store, select, equal]);
  return useSyncExternalStore(store.subscribe, get, get);
}

export const selectSettings = ({ input: _input, ...settings }: Composition): Settings => settings;
export const selectInput = (c: Composition): string => c.input;
export const selectHasInput = (c: Composition): boolean => c.input.trim() !== "";
/** The whole composition (what the pre-flight estimate counts): a new value on every change. */
export const selectAll = (c: Composition): Composition => c;

/**
 * The composition being edited: restored from a permalink when the page has one (what in it could
 * not be used is named in `linkProblems`), defaulting to the first workflow, with the recent
 * compositions this browser ran (attachments never stored). `c` is all of it but the input (read
 * the input with `useCompositionSelector(store, selectInput)`, or `store.get()` when acting).
 */
export function useComposition(firstWorkflow: string | undefined) {
  const [store] = useState(() => new CompositionStore(emptyComposition(pretty(SCHEMA_TEMPLATES[0]!.schema))));
  const c = useCompositionSelector(store, selectSettings);
  const { set: setC, update } = store;
  const [stored, rememberComposition] = useStoredList<Composition>("genserve.history", 20);
  // What this browser remembered is checked like a permalink (storage can hold anything).
  const history = useMemo(() => stored.map((h) => restoreComposition(h, emptyComposition("{}")).composition), [stored]);
  /** What a permalink held that could not be used, each named (shown until dismissed). */
  const [linkProblems, setLinkProblems] = useState<string[]>([]);
  /** The prompt's edits a permalink carried (a draft run reopened), for the workflow it names. */
  const [linkDraft, setLinkDraft] = useState<{ ref: string; edits: WorkflowDraft } | null>(null);

  useEffect(() => {
    const restored = fromPermalinkHash(window.location.hash);
    if (restored) {
      setC(restored.composition);
      setLinkProblems(restored.problems);
      if (restored.draft) setLinkDraft({ ref: restored.composition.workflowSlug, edits: restored.draft });
    }
    // "Try this version" (the workflow page): `?try=slug@4` selects that version; its schema,
    // instructions and parameters follow from its definition (the playground reads it).
    const tried = new URLSearchParams(window.location.search).get("try");
    if (tried && WORKFLOW_REF.test(tried)) {
      setC((prev) => ({ ...prev, workflowSlug: tried }));
      window.history.replaceState(null, "", window.location.pathname + window.location.hash);
    }
  }, [setC]);
  // Only while nothing is selected when the update applies: a choice made between this render and
  // the effect (the list's options arrive in the same render as `firstWorkflow`) is kept.
  useEffect(() => {
    if (!c.workflowSlug && firstWorkflow) setC((prev) => (prev.workflowSlug ? prev : { ...prev, workflowSlug: firstWorkflow }));
  }, [firstWorkflow, c.workflowSlug, setC]);

  const remember = useCallback((composition: Composition) => rememberComposition({ ...composition, attachments: [] }), [rememberComposition]);
  const dismissLinkProblems = useCallback(() => setLinkProblems([]), []);
  return { store, c, setC, update, history, remember, linkProblems, dismissLinkProblems, linkDraft };
}
