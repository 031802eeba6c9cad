"use client";

import { useCallback, useEffect, useMemo, useState } from "react";
import { emptyComposition, fromPermalinkHash, restoreComposition, type Composition } from "@/lib/client/composition";
import { SCHEMA_TEMPLATES } from "@/lib/client/templates";
import type { WorkflowDraft } from "@/lib/domain/drafts";
import { WORKFLOW_REF } from "@/lib/domain/names";
import { useStoredList } from "./use-stored-list";

export const pretty = (value: unknown) => JSON.stringify(value, null, 2);

/**
 * The composition being edited: restored from a permalink when the page has one (what in it could
 * not be used is named in `linkProblems`), defaulting to the first workflow, with the recent
 * compositions this browser ran (attachments never stored).
 */
export function useComposition(firstWorkflow: string | undefined) {
  const [c, setC] = useState<Composition>(() => emptyComposition(pretty(SCHEMA_TEMPLATES[0]!.schema)));
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
  }, []);
  // Only while nothing is selected when the update applies: a choice made between this render and
  // the effect (the list's options arrive in the same render as `firstWorkflow`) is kept.
  useEffect(() => {
    if (!c.workflowSlug && firstWorkflow) setC((prev) => (prev.workflowSlug ? prev : { ...prev, workflowSlug: firstWorkflow }));
  }, [firstWorkflow, c.workflowSlug]);

  const update = useCallback(<K extends keyof Composition>(key: K, value: Composition[K]) => setC((prev) => ({ ...prev, [key]: value })), []);
  const remember = useCallback((composition: Composition) => rememberComposition({ ...composition, attachments: [] }), [rememberComposition]);
  const dismissLinkProblems = useCallback(() => setLinkProblems([]), []);
  return { c, setC, update, history, remember, linkProblems, dismissLinkProblems, linkDraft };
}
