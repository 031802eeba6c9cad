"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ApiError, type ApiClient } from "@/lib/client/api";
import { queryKeys } from "@/lib/client/query-keys";

const field = "w-full rounded border border-zinc-400 bg-white px-2 py-1.5 text-sm dark:border-zinc-600 dark:bg-zinc-900";

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
        <div>
          <label htmlFor="entry-slug" className="block text-sm font-medium">
            Slug
          </label>
          <input id="entry-slug" className={field} value={slug} onChange={(e) => setSlug(e.target.value)} required />
        </div>
      ) : null}
      {target.kind === "contexts" ? (
        <>
          <div>
            <label htmlFor="entry-title" className="block text-sm font-medium">
              Title
            </label>
            <input id="entry-title" className={field} value={title} onChange={(e) => setTitle(e.target.value)} />
          </div>
          <div>
            <label htmlFor="entry-content" className="block text-sm font-medium">
              Content
            </label>
            <textarea id="entry-content" rows={8} className={field} value={content} onChange={(e) => setContent(e.target.value)} required />
          </div>
        </>
      ) : (
        <div>
          <label htmlFor="entry-body" className="block text-sm font-medium">
            Workflow (JSON: model, description, instructions, temperature, maxOutputTokens, retries, timeoutMs, contexts)
          </label>
          <textarea id="entry-body" rows={10} className={`${field} font-mono`} value={bodyText} onChange={(e) => setBodyText(e.target.value)} />
        </div>
      )}
      {error ? (
        <p role="alert" className="text-sm text-red-700 dark:text-red-400">
          {error}
        </p>
      ) : null}
      <div className="flex gap-2">
        <button type="submit" disabled={save.isPending || !slug} className="rounded bg-blue-700 px-3 py-1.5 text-sm text-white disabled:opacity-60">
          Save
        </button>
        <button type="button" onClick={onDone} className="rounded border border-zinc-400 px-3 py-1.5 text-sm dark:border-zinc-600">
          Cancel
        </button>
      </div>
    </form>
  );
}
