"use client";

import type { FieldProblem } from "@/lib/client/api";
import type { Composition } from "@/lib/client/composition";
import { Button } from "../ui/button";
import { Field, FieldErrors, TextInput } from "../ui/field";
import type { Settings } from "./use-composition";

type Update = <K extends keyof Composition>(key: K, value: Composition[K]) => void;

/** A streamed run's thread: empty for a single run, a recent one, or a new one. */
export function ThreadField({ c, update, recent, problems }: { c: Settings; update: Update; recent: string[]; problems: FieldProblem[] }) {
  return (
    <Field id="thread" label="Thread id (optional)" problems={problems}>
      <div className="flex gap-2">
        <TextInput id="thread" list="recent-threads" value={c.threadId} onChange={(e) => update("threadId", e.target.value)} placeholder="leave empty for a single run" />
        <datalist id="recent-threads">
          {recent.map((t) => (
            <option key={t} value={t} />
          ))}
        </datalist>
        <Button onClick={() => update("threadId", `t-${Date.now().toString(36)}`)}>
          New thread
        </Button>
      </div>
    </Field>
  );
}

/** Where a generate run's event goes, and the properties it carries back. */
export function CallbackFields({ c, update, problems }: { c: Settings; update: Update; problems: FieldProblem[] }) {
  return (
    <fieldset className="grid gap-3 rounded border border-zinc-200 p-3 sm:grid-cols-2 dark:border-zinc-800">
      <legend className="px-1 text-sm font-medium">Callback</legend>
      <div>
        <label htmlFor="callback-url" className="block text-sm">
          Callback URL
        </label>
        <TextInput id="callback-url" value={c.callbackUrl} onChange={(e) => update("callbackUrl", e.target.value)} />
      </div>
      <div>
        <label htmlFor="custom-properties" className="block text-sm">
          Custom properties (JSON)
        </label>
        <TextInput id="custom-properties" className="font-mono" value={c.customPropertiesText} onChange={(e) => update("customPropertiesText", e.target.value)} />
      </div>
      <FieldErrors id="callback-error" problems={problems} />
    </fieldset>
  );
}
