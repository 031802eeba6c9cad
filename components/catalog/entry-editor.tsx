"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ApiError, type ApiClient } from "@/lib/client/api";
import { queryKeys } from "@/lib/client/query-keys";
import { Button } from "../ui/button";
import { Field, TextArea, TextInput } from "../ui/field";


export interface EditorTarget {
  kind: "workflows" | "contexts";
  /** null: a new entry. */
  slug: string | null;
  initial: Record<string, unknown>;
}

/**
 * Creates or changes an API-managed workflow or context (admin keys). Workflows are edited as the
 * JSON of their fields; contexts as title and content. Every save is a new version.
 */
export function EntryEditor({ client, apiKey, target, onDone }: { client: ApiClient; apiKey: string; target: EditorTarget; onDone(): void }) {
  const queryClient = useQueryClient();
  const [slug, setSlug] = useState(target.slug ?? "");
  const [title, setTitle] = useState(String(target.initial.title ?? ""));
  const [content, setContent] = useState(String(target.initial.content ?? ""));
  const [bodyText, setBodyText] = useState(JSON.stringify(target.initial, null, 2));
  const [error, setError] = useState<string | null>(null);
  const label = target.kind === "workflows" ? "workflow" : "context";

  const save = useMutation({
    mutationFn: async () => {
      const body = target.kind === "contexts" ? { ...(title ? { title } : {}), content } : (JSON.parse(bodyText) as unknown);
      return client.putEntry(target.kind, slug, body);
    },
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: target.kind === "workflows" ? queryKeys.workflows(apiKey) : queryKeys.contexts(apiKey) });
      onDone();
    },
    onError: (e) => setError(e instanceof ApiError ? [e.detail, ...e.errors.map((p) => `${p.path}: ${p.message}`)].join(" · ") : (e as Error).message),
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    save.mutate();
  };

  return (
    <form onSubmit={submit} aria-label={`Edit ${label}`} className="mt-4 space-y-3 rounded border border-zinc-300 p-4 dark:border-zinc-700">
      <h2 className="text-lg font-semibold">{target.slug ? `Edit ${label} ${target.slug}` : `New ${label}`}</h2>
      {target.slug === null ? (
        <Field id="entry-slug" label="Slug">
          <TextInput id="entry-slug" value={slug} onChange={(e) => setSlug(e.target.value)} required />
        </Field>
      ) : null}
      {target.kind === "contexts" ? (
        <>
          <Field id="entry-title" label="Title">
            <TextInput id="entry-title" value={title} onChange={(e) => setTitle(e.target.value)} />
          </Field>
          <Field id="entry-content" label="Content">
            <TextArea id="entry-content" rows={8} value={content} onChange={(e) => setContent(e.target.value)} required />
          </Field>
        </>
      ) : (
        <Field id="entry-body" label="Workflow (JSON: model, description, instructions, temperature, maxOutputTokens, retries, timeoutMs, contexts)">
          <TextArea id="entry-body" rows={10} className="font-mono" value={bodyText} onChange={(e) => setBodyText(e.target.value)} />
        </Field>
      )}
      {error ? (
        <p role="alert" className="text-sm text-red-700 dark:text-red-400">
          {error}
        </p>
      ) : null}
      <div className="flex gap-2">
        <Button type="submit" variant="primary" disabled={save.isPending || !slug}>
          Save
        </Button>
        <Button onClick={onDone}>Cancel</Button>
      </div>
    </form>
  );
}
