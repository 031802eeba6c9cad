"use client";

import { PROTECTED_LABEL, roleReason, type Role } from "@/lib/domain/roles";
import { memo, useState } from "react";
import type { ContextSummary, FieldProblem, ModelStatus } from "@/lib/client/api";
import { ApiError } from "@/lib/client/api";
import type { DraftDefinition } from "@/lib/domain/drafts";
import { useTheme } from "../theme";
import { Badge } from "../ui/badge";
import { Button } from "../ui/button";
import { Field, FieldErrors, Select, TextInput } from "../ui/field";
import { TextEditor } from "./monaco/text-editor";
import type { useDraft } from "./use-draft";

type Draft = ReturnType<typeof useDraft>;

const numberOrNull = (text: string): number | null => (text.trim() === "" ? null : Number(text));

/**
 * The selected workflow's prompt beside the input: instructions in an editor, model, temperature,
 * output limit, retries and contexts, prefilled from the version and editable. Edits are a draft:
 * run as they are (Run sends them with the request), kept in this browser until reverted or saved
 * as the next version. Keys that may not edit workflows see the definition read-only. Memoised
 * (the draft from useDraft is the same object until it changes): a run's start or end, or typing
 * elsewhere, does not redraw it.
 */
export const PromptSection = memo(function PromptSection({
  draft,
  models,
  contexts,
  role,
  onRun,
  problems,
}: {
  draft: Draft;
  models: ModelStatus[] | undefined;
  contexts: ContextSummary[] | undefined;
  /** The key's role: viewers read the definition; editors edit, run and save it; only admins move `production`. */
  role: Role;
  onRun(): void;
  problems: FieldProblem[];
}) {
  const { dark } = useTheme();
  const { definition, current, changed } = draft;
  const [saving, setSaving] = useState(false);
  const [note, setNote] = useState("");
  const [label, setLabel] = useState("");
  const [saveError, setSaveError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  if (!definition || !current) {
    return (
      <section aria-label="Prompt" className="text-sm text-zinc-700 dark:text-zinc-300">
        {draft.loading ? "Loading the workflow's prompt…" : draft.error ? `The workflow's prompt could not be read: ${(draft.error as Error).message}` : null}
      </section>
    );
  }
  const readOnlyReason = roleReason(role, "editor", "editing a workflow");
  const readOnly = readOnlyReason !== null;
  const edited = changed !== undefined;
  const fromConfig = definition.source === "config";
  const at = (field: string) => problems.filter((p) => p.path === `/draft/${field}` || p.path.startsWith(`/draft/${field}/`));
  const set = <K extends keyof DraftDefinition>(field: K, value: DraftDefinition[K]) => {
    setSaved(null);
    draft.edit(field, value);
  };
  const save = async () => {
    setSaveError(null);
    const protectedReason = label.trim() === PROTECTED_LABEL ? roleReason(role, "admin", `moving the ${PROTECTED_LABEL} label`) : null;
    if (protectedReason) return setSaveError(protectedReason);
    try {
      const version = await draft.save({ note, label });
      setSaved(`Saved as ${version.slug}@${version.version}${label.trim() ? `; ${label.trim()} points at it` : ""}.`);
      setNote("");
      setLabel("");
      setSaving(false);
    } catch (error) {
      setSaveError(error instanceof ApiError ? `${error.detail}${error.errors.length ? ` (${error.errors.map((e) => `${e.path}: ${e.message}`).join("; ")})` : ""}` : (error as Error).message);
    }
  };
  return (
    <section id="prompt-section" aria-label="Prompt" className="scroll-mt-20 space-y-3 rounded border border-zinc-200 p-3 dark:border-zinc-800">
      <div className="flex flex-wrap items-center gap-2">
        <h2 className="text-sm font-medium">Prompt</h2>
        <span className="text-xs text-zinc-700 dark:text-zinc-300">
          {definition.slug}@{definition.version}
        </span>
        {edited ? (
          <Badge tone="warning" className="text-xs">
            edited
          </Badge>
        ) : null}
        {readOnly ? <span className="text-xs text-zinc-700 dark:text-zinc-300">{readOnlyReason}</span> : null}
        <span className="ml-auto flex gap-2">
          {edited ? (
            <Button size="sm" onClick={draft.revert}>
              Revert to saved
            </Button>
          ) : null}
          {edited && !fromConfig && !readOnly ? (
            <Button size="sm" onClick={() => setSaving(!saving)} aria-expanded={saving}>
              Save as version…
            </Button>
          ) : null}
        </span>
      </div>
      {edited ? (
        <p className="text-xs text-zinc-700 dark:text-zinc-300" id="draft-help">
          Unsaved draft ({Object.keys(changed).join(", ")} changed): Run runs it as it is; nothing is saved and {definition.slug} still runs version {definition.version} for everyone else.
          {fromConfig ? " This workflow comes from genserve.yaml: save it there." : ""}
        </p>
      ) : null}
      {saved ? (
        <p role="status" className="text-xs text-green-800 dark:text-green-300">
          {saved}
        </p>
      ) : null}
      {saving && edited ? (
        <div className="space-y-2 rounded bg-zinc-50 p-2 dark:bg-zinc-900" aria-label="Save as a new version" role="group">
          <Field id="version-note" label="What changed (the version's note)">
            <TextInput id="version-note" value={note} maxLength={1000} onChange={(e) => setNote(e.target.value)} placeholder="e.g. Ask for ISO dates" />
          </Field>
          <Field id="version-label" label="Move a label to it (optional)" help={`e.g. staging; leave empty to move none. production changes what the plain slug runs${role === "admin" ? "" : " and needs an admin key"}.`}>
            <TextInput id="version-label" value={label} onChange={(e) => setLabel(e.target.value)} placeholder="staging" aria-describedby="version-label-help" />
          </Field>
          {saveError ? (
            <p role="alert" className="text-sm text-red-700 dark:text-red-400">
              {saveError}
            </p>
          ) : null}
          <Button variant="primary" onClick={() => void save()}>
            Save as the next version
          </Button>
        </div>
      ) : null}
      <div>
        <p className="mb-1 text-sm font-medium" id="instructions-label">
          Instructions
        </p>
        <TextEditor value={current.instructions} onChange={(v) => set("instructions", v)} label="Instructions" onRun={onRun} dark={dark} readOnly={readOnly} testId="instructions-editor" />
        <FieldErrors id="instructions-error" problems={at("instructions")} />
      </div>
      <div className="grid grid-cols-2 gap-3 sm:grid-cols-4">
        <Field id="draft-model" label="Model" problems={at("model")}>
          <Select id="draft-model" value={current.model} disabled={readOnly} onChange={(e) => set("model", e.target.value)}>
            {[...new Set([current.model, ...(models ?? []).map((m) => m.alias)])].map((alias) => (
              <option key={alias} value={alias}>
                {alias}
              </option>
            ))}
          </Select>
        </Field>
        <Field id="draft-temperature" label="Temperature" problems={at("temperature")}>
          <TextInput id="draft-temperature" type="number" min={0} max={2} step={0.1} placeholder="default" readOnly={readOnly} value={current.temperature ?? ""} onChange={(e) => set("temperature", numberOrNull(e.target.value))} />
        </Field>
        <Field id="draft-max-tokens" label="Max output tokens" problems={at("maxOutputTokens")}>
          <TextInput id="draft-max-tokens" type="number" min={1} step={1} placeholder="model's" readOnly={readOnly} value={current.maxOutputTokens ?? ""} onChange={(e) => set("maxOutputTokens", numberOrNull(e.target.value))} />
        </Field>
        <Field id="draft-retries" label="Retries" problems={at("retries")}>
          <TextInput id="draft-retries" type="number" min={0} max={10} step={1} readOnly={readOnly} value={current.retries} onChange={(e) => set("retries", Number(e.target.value || 0))} />
        </Field>
      </div>
      {contexts && contexts.length > 0 ? (
        <fieldset>
          <legend className="text-sm font-medium">Workflow contexts</legend>
          <div className="mt-1 flex flex-wrap gap-x-4 gap-y-1 text-sm">
            {contexts.map((ctx) => (
              <label key={ctx.slug} className="inline-flex items-center gap-1">
                <input
                  type="checkbox"
                  disabled={readOnly}
                  checked={current.contexts.includes(ctx.slug)}
                  onChange={(e) => set("contexts", e.target.checked ? [...current.contexts, ctx.slug] : current.contexts.filter((s) => s !== ctx.slug))}
                />
                {ctx.slug}
              </label>
            ))}
          </div>
          <FieldErrors id="draft-contexts-error" problems={at("contexts")} />
        </fieldset>
      ) : null}
    </section>
  );
});
