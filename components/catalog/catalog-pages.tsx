"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState, type ReactNode } from "react";
import type { ApiClient, ContextSummary, WorkflowSummary } from "@/lib/client/api";
import { queryKeys } from "@/lib/client/query-keys";
import { RequireKey } from "../require-key";
import { TableHead } from "../ui/table-head";
import { EntryEditor, type EditorTarget } from "./entry-editor";
import { Button } from "../ui/button";
import { Page } from "../ui/page";
import { ScrollTable } from "../ui/scroll-table";

const td = "py-1.5 pr-4 align-top";

export function WorkflowsPage() {
  return <RequireKey>{(client, apiKey) => <Workflows client={client} apiKey={apiKey} />}</RequireKey>;
}

export function ContextsPage() {
  return <RequireKey>{(client, apiKey) => <Contexts client={client} apiKey={apiKey} />}</RequireKey>;
}

function Workflows({ client, apiKey }: { client: ApiClient; apiKey: string }) {
  const q = useQuery({ queryKey: queryKeys.workflows(apiKey), queryFn: ({ signal }) => client.listWorkflows(signal) });
  return (
    <CatalogView<WorkflowSummary>
      client={client}
      apiKey={apiKey}
      kind="workflows"
      title="Workflows"
      rows={q.data}
      columns={[
        {
          header: "Slug",
          cell: (w) => (
            <Link href={`/workflows/${encodeURIComponent(w.slug)}`} className="font-mono underline">
              {w.slug}
            </Link>
          ),
        },
        { header: "Description", cell: (w) => w.description },
        { header: "Model", cell: (w) => w.model },
        { header: "Default contexts", cell: (w) => w.contexts.join(", ") || "—" },
      ]}
      blank={{ model: "", description: "", instructions: "", contexts: [] }}
      load={async (slug) => {
        const { slug: _slug, version: _version, source: _source, ...fields } = await client.getEntry("workflows", slug);
        return fields;
      }}
      empty="No workflows exist yet (add them to genserve.yaml, or create one here with an editor or admin key)."
    />
  );
}

function Contexts({ client, apiKey }: { client: ApiClient; apiKey: string }) {
  const q = useQuery({ queryKey: queryKeys.contexts(apiKey), queryFn: ({ signal }) => client.listContexts(signal) });
  return (
    <CatalogView<ContextSummary>
      client={client}
      apiKey={apiKey}
      kind="contexts"
      title="Contexts"
      rows={q.data}
      columns={[
        { header: "Slug", cell: (x) => <span className="font-mono">{x.slug}</span> },
        { header: "Title", cell: (x) => x.title },
        { header: "Size (characters)", cell: (x) => x.size.toLocaleString() },
      ]}
      blank={{}}
      load={async (slug) => {
        const entry = await client.getEntry("contexts", slug);
        return { title: entry.title, content: entry.content };
      }}
      empty="No contexts exist yet."
    />
  );
}

interface CatalogViewProps<T> {
  client: ApiClient;
  apiKey: string;
  kind: EditorTarget["kind"];
  title: string;
  rows: T[] | undefined;
  columns: { header: string; cell(row: T): ReactNode }[];
  /** The fields a new entry starts with. */
  blank: Record<string, unknown>;
  /** The editable fields of an existing entry. */
  load(slug: string): Promise<Record<string, unknown>>;
  empty: string;
}

/** A catalog table for every key; editor and admin keys also get create, edit and delete for API-managed entries. */
function CatalogView<T extends { slug: string; version: string; source: "config" | "api" }>(props: CatalogViewProps<T>) {
  const { client, apiKey, kind, rows } = props;
  // Editors and admins change API-managed entries; viewers read.
  const role = useQuery({ queryKey: queryKeys.me(apiKey), queryFn: ({ signal }) => client.me(signal) }).data?.role;
  const mayEdit = role === "editor" || role === "admin";
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState<EditorTarget | null>(null);
  const listKey = kind === "workflows" ? queryKeys.workflows(apiKey) : queryKeys.contexts(apiKey);
  return (
    <Page>
      <div className="flex items-center gap-3">
        <h1 className="mr-auto text-2xl font-semibold">{props.title}</h1>
        {mayEdit ? (
          <Button variant="primary" onClick={() => setEditing({ kind, slug: null, initial: props.blank })}>
            New {kind === "workflows" ? "workflow" : "context"}
          </Button>
        ) : null}
      </div>
      {editing ? <EntryEditor client={client} apiKey={apiKey} target={editing} onDone={() => setEditing(null)} /> : null}
      <ScrollTable className="mt-4 w-full text-left text-sm">
        <TableHead columns={[...props.columns.map((c) => c.header), "Version", ...(mayEdit ? ["Manage"] : [])]} />
        <tbody>
          {rows?.map((row) => (
            <tr key={row.slug} className="border-b border-zinc-100 dark:border-zinc-900">
              {props.columns.map((c) => (
                <td key={c.header} className={td}>
                  {c.cell(row)}
                </td>
              ))}
              <td className={td}>{row.version}</td>
              {mayEdit ? (
                <td className={td}>
                  {row.source !== "api" ? (
                    <span className="text-xs text-zinc-600 dark:text-zinc-400">from genserve.yaml</span>
                  ) : (
                    <span className="flex gap-2">
                      <Button size="sm" aria-label={`Edit ${row.slug}`} onClick={async () => setEditing({ kind, slug: row.slug, initial: await props.load(row.slug) })}>
                        Edit
                      </Button>
                      <Button
                        size="sm"
                        variant="danger"
                        aria-label={`Delete ${row.slug}`}
                        onClick={async () => {
                          await client.deleteEntry(kind, row.slug);
                          await queryClient.invalidateQueries({ queryKey: listKey });
                        }}
                      >
                        Delete
                      </Button>
                    </span>
                  )}
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </ScrollTable>
      {rows?.length === 0 ? <p className="mt-4 text-sm">{props.empty}</p> : null}
    </Page>
  );
}
