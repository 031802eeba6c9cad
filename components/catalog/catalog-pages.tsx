"use client";

import { useQuery } from "@tanstack/react-query";
import type { ApiClient } from "@/lib/client/api";
import { queryKeys } from "@/lib/client/query-keys";
import { RequireKey } from "../require-key";

const th = "py-2 pr-4";
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
    <main className="mx-auto max-w-5xl px-4 py-6">
      <h1 className="text-2xl font-semibold">Workflows</h1>
      <table className="mt-4 w-full text-left text-sm">
        <thead>
          <tr className="border-b border-zinc-300 dark:border-zinc-700">
            <th className={th}>Slug</th>
            <th className={th}>Description</th>
            <th className={th}>Model</th>
            <th className={th}>Default contexts</th>
          </tr>
        </thead>
        <tbody>
          {q.data?.map((w) => (
            <tr key={w.slug} className="border-b border-zinc-100 dark:border-zinc-900">
              <td className={`${td} font-mono`}>{w.slug}</td>
              <td className={td}>{w.description}</td>
              <td className={td}>{w.model}</td>
              <td className={td}>{w.contexts.join(", ") || "—"}</td>
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
  return (
    <main className="mx-auto max-w-5xl px-4 py-6">
      <h1 className="text-2xl font-semibold">Contexts</h1>
      <table className="mt-4 w-full text-left text-sm">
        <thead>
          <tr className="border-b border-zinc-300 dark:border-zinc-700">
            <th className={th}>Slug</th>
            <th className={th}>Title</th>
            <th className={th}>Size (characters)</th>
          </tr>
        </thead>
        <tbody>
          {q.data?.map((x) => (
            <tr key={x.slug} className="border-b border-zinc-100 dark:border-zinc-900">
              <td className={`${td} font-mono`}>{x.slug}</td>
              <td className={td}>{x.title}</td>
              <td className={td}>{x.size.toLocaleString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {q.data?.length === 0 ? <p className="mt-4 text-sm">No contexts are configured.</p> : null}
    </main>
  );
}
