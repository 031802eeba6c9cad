"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { ApiClient } from "@/lib/client/api";
import { queryKeys } from "@/lib/client/query-keys";
import { RequireKey } from "../require-key";
import { EntryEditor, type EditorTarget } from "./entry-editor";

const th = "py-2 pr-4";
const td = "py-1.5 pr-4 align-top";

export function WorkflowsPage() {
  return <RequireKey>{(client, apiKey) => <Workflows client={client} apiKey={apiKey} />}</RequireKey>;
}

export function ContextsPage() {
  return <RequireKey>{(client, apiKey) => <Contexts client={client} apiKey={apiKey} />}</RequireKey>;
}

/** Admin keys see the editing controls; the API refuses others anyway. */
function useAdmin(client: ApiClient, apiKey: string): boolean {
  return useQuery({ queryKey: queryKeys.me(apiKey), queryFn: ({ signal }) => client.me(signal) }).data?.admin ?? false;
}

function AdminActions({ client, apiKey, kind, slug, source, onEdit }: { client: ApiClient; apiKey: string; kind: EditorTarget["kind"]; slug: string; source: string; onEdit(): void }) {
  const queryClient = useQueryClient();
  if (source !== "api") return <span className="text-xs text-zinc-600 dark:text-zinc-400">from genserve.yaml</span>;
  return (
    <span className="flex gap-2">
      <button type="button" className="rounded border border-zinc-400 px-2 py-0.5 text-xs dark:border-zinc-600" onClick={onEdit} aria-label={`Edit ${slug}`}>
        Edit
      </button>
      <button
        type="button"
        className="rounded border border-red-400 px-2 py-0.5 text-xs text-red-800 dark:text-red-300"
        aria-label={`Delete ${slug}`}
        onClick={async () => {
          await client.deleteEntry(kind, slug);
          await queryClient.invalidateQueries({ queryKey: kind === "workflows" ? queryKeys.workflows(apiKey) : queryKeys.contexts(apiKey) });
        }}
      >
        Delete
      </button>
    </span>
  );
}

function Workflows({ client, apiKey }: { client: ApiClient; apiKey: string }) {
  const q = useQuery({ queryKey: queryKeys.workflows(apiKey), queryFn: ({ signal }) => client.listWorkflows(signal) });
  const admin = useAdmin(client, apiKey);
  const [editing, setEditing] = useState<EditorTarget | null>(null);
  const edit = async (slug: string) => {
    const { slug: _slug, version: _version, source: _source, ...fields } = await client.getEntry("workflows", slug);
    setEditing({ kind: "workflows", slug, initial: fields });
  };
  return (
    <main className="mx-auto max-w-5xl px-4 py-6">
      <div className="flex items-center gap-3">
        <h1 className="mr-auto text-2xl font-semibold">Workflows</h1>
        {admin ? (
          <button type="button" className="rounded bg-blue-700 px-3 py-1.5 text-sm text-white" onClick={() => setEditing({ kind: "workflows", slug: null, initial: { model: "", description: "", instructions: "", contexts: [] } })}>
            New workflow
          </button>
        ) : null}
      </div>
      {editing ? <EntryEditor client={client} apiKey={apiKey} target={editing} onDone={() => setEditing(null)} /> : null}
      <table className="mt-4 w-full text-left text-sm">
        <thead>
          <tr className="border-b border-zinc-300 dark:border-zinc-700">
            <th className={th}>Slug</th>
            <th className={th}>Description</th>
            <th className={th}>Model</th>
            <th className={th}>Default contexts</th>
            <th className={th}>Version</th>
            {admin ? <th className={th}>Manage</th> : null}
          </tr>
        </thead>
        <tbody>
          {q.data?.map((w) => (
            <tr key={w.slug} className="border-b border-zinc-100 dark:border-zinc-900">
              <td className={`${td} font-mono`}>{w.slug}</td>
              <td className={td}>{w.description}</td>
              <td className={td}>{w.model}</td>
              <td className={td}>{w.contexts.join(", ") || "—"}</td>
              <td className={td}>{w.version}</td>
              {admin ? (
                <td className={td}>
                  <AdminActions client={client} apiKey={apiKey} kind="workflows" slug={w.slug} source={w.source} onEdit={() => void edit(w.slug)} />
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
      {q.data?.length === 0 ? <p className="mt-4 text-sm">No workflows are configured (add them to genserve.yaml).</p> : null}
    </main>
  );
}

function Contexts({ client, apiKey }: { client: ApiClient; apiKey: string }) {
  const q = useQuery({ queryKey: queryKeys.contexts(apiKey), queryFn: ({ signal }) => client.listContexts(signal) });
  const admin = useAdmin(client, apiKey);
  const [editing, setEditing] = useState<EditorTarget | null>(null);
  const edit = async (slug: string) => {
    const entry = await client.getEntry("contexts", slug);
    setEditing({ kind: "contexts", slug, initial: { title: entry.title, content: entry.content } });
  };
  return (
    <main className="mx-auto max-w-5xl px-4 py-6">
      <div className="flex items-center gap-3">
        <h1 className="mr-auto text-2xl font-semibold">Contexts</h1>
        {admin ? (
          <button type="button" className="rounded bg-blue-700 px-3 py-1.5 text-sm text-white" onClick={() => setEditing({ kind: "contexts", slug: null, initial: {} })}>
            New context
          </button>
        ) : null}
      </div>
      {editing ? <EntryEditor client={client} apiKey={apiKey} target={editing} onDone={() => setEditing(null)} /> : null}
      <table className="mt-4 w-full text-left text-sm">
        <thead>
          <tr className="border-b border-zinc-300 dark:border-zinc-700">
            <th className={th}>Slug</th>
            <th className={th}>Title</th>
            <th className={th}>Size (characters)</th>
            <th className={th}>Version</th>
            {admin ? <th className={th}>Manage</th> : null}
          </tr>
        </thead>
        <tbody>
          {q.data?.map((x) => (
            <tr key={x.slug} className="border-b border-zinc-100 dark:border-zinc-900">
              <td className={`${td} font-mono`}>{x.slug}</td>
              <td className={td}>{x.title}</td>
              <td className={td}>{x.size.toLocaleString()}</td>
              <td className={td}>{x.version}</td>
              {admin ? (
                <td className={td}>
                  <AdminActions client={client} apiKey={apiKey} kind="contexts" slug={x.slug} source={x.source} onEdit={() => void edit(x.slug)} />
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
      {q.data?.length === 0 ? <p className="mt-4 text-sm">No contexts are configured.</p> : null}
    </main>
  );
}
