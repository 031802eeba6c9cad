"use client";

import { useCallback, useEffect, useState } from "react";
import { emptyComposition, fromPermalinkHash, type Composition } from "@/lib/client/composition";
import { SCHEMA_TEMPLATES } from "@/lib/client/templates";
import { useStoredList } from "./use-stored-list";

export const pretty = (value: unknown) => JSON.stringify(value, null, 2);

/**
 * The composition being edited: restored from a permalink when the page has one, defaulting to the
 * first workflow, with the recent compositions this browser ran (attachments never stored).
 */
export function useComposition(firstWorkflow: string | undefined) {
  const [c, setC] = useState<Composition>(() => emptyComposition(pretty(SCHEMA_TEMPLATES[0]!.schema)));
  const [history, rememberComposition] = useStoredList<Composition>("genserve.history", 20);

  useEffect(() => {
    const restored = fromPermalinkHash(window.location.hash);
    if (restored) setC(restored);
  }, []);
  useEffect(() => {
    if (!c.workflowSlug && firstWorkflow) setC((prev) => ({ ...prev, workflowSlug: firstWorkflow }));
  }, [firstWorkflow, c.workflowSlug]);

  const update = useCallback(<K extends keyof Composition>(key: K, value: Composition[K]) => setC((prev) => ({ ...prev, [key]: value })), []);
  const remember = useCallback((composition: Composition) => rememberComposition({ ...composition, attachments: [] }), [rememberComposition]);
  return { c, setC, update, history, remember };
}
