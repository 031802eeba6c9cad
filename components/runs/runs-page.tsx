"use client";

import { TableHead } from "../ui/table-head";
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useRef, useState } from "react";
import type { ApiClient } from "@/lib/client/api";
import { queryKeys } from "@/lib/client/query-keys";
import { RequireKey } from "../require-key";
import { Badge, statusTone } from "../ui/badge";
import { Button } from "../ui/button";
import { Select } from "../ui/field";
import { Page } from "../ui/page";

export function RunsPage() {
  return <RequireKey>{(client, apiKey) => <RunsList client={client} apiKey={apiKey} />}</RequireKey>;
}


function RunsList({ client, apiKey }: { client: ApiClient; apiKey: string }) {
  const [filters, setFilters] = useState<{ workflowSlug?: string; status?: string; operation?: string }>({});
  const workflows = useQuery({ queryKey: queryKeys.workflows(apiKey), queryFn: ({ signal }) => client.listWorkflows(signal) });
  const runs = useInfiniteQuery({
    queryKey: queryKeys.runs(apiKey, filters),
    queryFn: ({ pageParam, signal }) => client.listRuns({ ...filters, cursor: pageParam, limit: 25 }, signal),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const sentinel = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const node = sentinel.current;
    if (!node) return;
    const observer = new IntersectionObserver(([entry]) => {
      if (entry?.isIntersecting && runs.hasNextPage && !runs.isFetchingNextPage) void runs.fetchNextPage();
    });
    observer.observe(node);
    return () => observer.disconnect();
  }, [runs]);

  const rows = runs.data?.pages.flatMap((p) => p.runs) ?? [];
  const set = (key: keyof typeof filters) => (e: React.ChangeEvent<HTMLSelectElement>) => setFilters((f) => ({ ...f, [key]: e.target.value || undefined }));

  return (
    <Page width="full">
      <h1 className="text-2xl font-semibold">Runs</h1>
      <div className="mt-4 flex flex-wrap gap-4" role="group" aria-label="Filters">
        <label className="text-sm">
          Workflow{" "}
          <Select compact value={filters.workflowSlug ?? ""} onChange={set("workflowSlug")}>
            <option value="">All</option>
            {workflows.data?.map((w) => (
              <option key={w.slug}>{w.slug}</option>
            ))}
          </Select>
        </label>
        <label className="text-sm">
          Status{" "}
          <Select compact value={filters.status ?? ""} onChange={set("status")}>
            <option value="">All</option>
            <option>running</option>
            <option>succeeded</option>
            <option>failed</option>
          </Select>
        </label>
        <label className="text-sm">
          Operation{" "}
          <Select compact value={filters.operation ?? ""} onChange={set("operation")}>
            <option value="">All</option>
            <option>generate.object</option>
            <option>stream.object</option>
            <option>generate.text</option>
          </Select>
        </label>
      </div>
      {runs.error ? (
        <p role="alert" className="mt-4 text-sm text-red-700 dark:text-red-400">
          {(runs.error as Error).message}
        </p>
      ) : null}
      <table className="mt-4 w-full text-left text-sm">
        <TableHead columns={["Run", "Operation", "Workflow", "Status", "Tokens in/out", "Cost", "Duration", "Created"]} />
        <tbody>
          {rows.map((r) => (
            <tr key={r.id} className="border-b border-zinc-100 dark:border-zinc-900">
              <td className="py-1.5 pr-3">
                <Link className="font-mono text-blue-700 underline dark:text-blue-400" href={`/runs/${r.id}`}>
                  {r.id}
                </Link>
              </td>
              <td className="py-1.5 pr-3">{r.operation}</td>
              <td className="py-1.5 pr-3">{r.workflowSlug}</td>
              <td className="py-1.5 pr-3">
                <Badge tone={statusTone(r.status)}>{r.status}</Badge>
              </td>
              <td className="py-1.5 pr-3">
                {r.metadata.inputTokens}/{r.metadata.outputTokens}
              </td>
              <td className="py-1.5 pr-3">{r.metadata.cost}</td>
              <td className="py-1.5 pr-3">{r.metadata.durationInMs} ms</td>
              <td className="py-1.5">{new Date(r.createdAt).toLocaleString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {rows.length === 0 && !runs.isLoading ? <p className="mt-4 text-sm">No runs yet.</p> : null}
      <div ref={sentinel} className="mt-4">
        {runs.hasNextPage ? (
          <Button onClick={() => void runs.fetchNextPage()} disabled={runs.isFetchingNextPage}>
            {runs.isFetchingNextPage ? "Loading…" : "Load more"}
          </Button>
        ) : null}
      </div>
    </Page>
  );
}
