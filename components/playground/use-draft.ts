"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { ApiClient } from "@/lib/client/api";
import { queryKeys } from "@/lib/client/query-keys";
import { changedDraftFields, draftDefinitionOf, type DraftDefinition, type WorkflowDraft } from "@/lib/domain/drafts";

/** A workflow version's full definition, as GET /api/v1/workflows/{ref} answers it. */
export interface WorkflowDefinition extends Record<string, unknown> {
  slug: string;
  model: string;
  instructions: string;
  temperature?: number;
  maxOutputTokens?: number;
  retries: number;
  contexts: string[];
  schema?: Record<string, unknown>;
  example?: { input: string; schema?: Record<string, unknown> };
  version: string;
  source: "config" | "api";
}

const storageKey = (ref: string) => `genserve.draft.${ref}`;

/**
 * The selected workflow's definition and this browser's unsaved edits of it (kept in localStorage
 * per workflow reference, so they survive a reload): what the prompt section shows, what a run
 * sends as `draft` (only the fields that differ), and saving the edits as the next version.
 */
export function useDraft(client: ApiClient, apiKey: string, ref: string, seed: { ref: string; edits: WorkflowDraft } | null = null) {
  const queryClient = useQueryClient();
  const definition = useQuery({
    queryKey: queryKeys.workflow(apiKey, ref),
    queryFn: ({ signal }) => client.getEntry("workflows", ref, signal) as Promise<WorkflowDefinition>,
    enabled: ref !== "",
    retry: false,
  });
  const [edits, setEdits] = useState<Partial<DraftDefinition>>({});
  const [loadedFor, setLoadedFor] = useState<string | null>(null);
  // A permalink's draft (a draft run reopened) replaces this browser's edits of that workflow, once.
  const seeded = useRef<object | null>(null);
  useEffect(() => {
    if (seed && seed.ref === ref && seeded.current !== seed) {
      seeded.current = seed;
      setEdits(seed.edits as Partial<DraftDefinition>);
      localStorage.setItem(storageKey(ref), JSON.stringify({ edits: seed.edits, savedAt: new Date().toISOString() }));
      setLoadedFor(ref);
      return;
    }
    try {
      const stored = JSON.parse(localStorage.getItem(storageKey(ref)) ?? "null") as { edits?: Partial<DraftDefinition> } | null;
      setEdits(stored?.edits && typeof stored.edits === "object" ? stored.edits : {});
    } catch {
      setEdits({});
    }
    setLoadedFor(ref);
  }, [ref, seed]);
  const base = useMemo(() => (definition.data ? draftDefinitionOf(definition.data) : null), [definition.data]);
  const current = useMemo<DraftDefinition | null>(() => base && { ...base, ...edits }, [base, edits]);
  /** The fields that differ from the saved version: what a run sends as `draft`. */
  const changed = useMemo<WorkflowDraft | undefined>(() => {
    if (!base || !current) return undefined;
    const fields = changedDraftFields(base, current);
    return fields.length > 0 ? (Object.fromEntries(fields.map((field) => [field, current[field]])) as WorkflowDraft) : undefined;
  }, [base, current]);

  const persist = useCallback(
    (next: Partial<DraftDefinition>) => {
      setEdits(next);
      if (Object.keys(next).length === 0) localStorage.removeItem(storageKey(ref));
      else localStorage.setItem(storageKey(ref), JSON.stringify({ edits: next, savedAt: new Date().toISOString() }));
    },
    [ref],
  );
  const edit = useCallback(<K extends keyof DraftDefinition>(field: K, value: DraftDefinition[K]) => {
    if (loadedFor !== ref) return;
    persist({ ...edits, [field]: value });
  }, [edits, persist, loadedFor, ref]);
  const revert = useCallback(() => persist({}), [persist]);

  /** Saves the edited definition as the workflow's next version (with its note), optionally moving a label to it. */
  const save = useCallback(
    async ({ note, label }: { note: string; label: string }) => {
      if (!definition.data || !current) throw new Error("The workflow is not loaded yet.");
      const { slug, version: _v, source: _s, label: _l, contextVersions: _cv, note: _n, temperature: _t, maxOutputTokens: _m, ...rest } = definition.data;
      const body = {
        ...rest,
        ...current,
        temperature: current.temperature ?? undefined,
        maxOutputTokens: current.maxOutputTokens ?? undefined,
        ...(note.trim() && { note: note.trim() }),
      };
      const saved = (await client.putEntry("workflows", slug, body)) as WorkflowDefinition;
      if (label.trim()) await client.promote(slug, label.trim(), { version: saved.version });
      persist({});
      await queryClient.invalidateQueries({ queryKey: queryKeys.all });
      return saved;
    },
    [client, current, definition.data, persist, queryClient],
  );
  // The same object until something in it changes: the prompt section is memoised on it.
  const { data, isLoading: loading, error } = definition;
  return useMemo(() => ({ definition: data, loading, error, base, current, changed, edit, revert, save }), [data, loading, error, base, current, changed, edit, revert, save]);
}
