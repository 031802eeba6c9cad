"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useMemo, useRef, useState } from "react";
import type { ApiClient, RunSummary } from "@/lib/client/api";
import { formatAgo, formatDuration, formatUsd } from "@/lib/client/format";
import { queryKeys } from "@/lib/client/query-keys";
import { RequireKey } from "../require-key";
import { Badge, statusTone } from "../ui/badge";
import { Button } from "../ui/button";
import { Select, TextInput } from "../ui/field";
import { Page } from "../ui/page";

export function RunsPage() {
  return <RequireKey>{(client, apiKey) => <RunsList client={client} apiKey={apiKey} />}</RequireKey>;
}

const PERIODS = { any: null, "1h": 3_600_000, "24h": 86_400_000, "7d": 7 * 86_400_000, "30d": 30 * 86_400_000 } as const;
type Period = keyof typeof PERIODS;
const STATUSES = ["succeeded", "failed", "cancelled", "running"] as const;
type SortKey = "created" | "duration" | "cost" | "tokens";
const SORT: Record<SortKey, (r: RunSummary) => number> = {
  created: (r) => Date.parse(r.createdAt),
  duration: (r) => r.metadata.durationInMs,
  cost: (r) => Number(r.metadata.cost),
  tokens: (r) => r.metadata.inputTokens + r.metadata.outputTokens,
};

/** A line of a run's input or output to recognise it by. */
/** A draft run, whether or not its record fitted in the list's preview. */
const isDraft = (r: RunSummary) => Boolean(r.draft) || Boolean(r.truncated?.includes("draft"));

function preview(value: unknown, max = 90): string {
  const text = (typeof value === "string" ? value : value === null || value === undefined ? "" : JSON.stringify(value)).replace(/\s+/g, " ").trim();
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * Runs as a trace table: status first, what went in and came out, usage and timing, when; searched
 * (input text or run id) and filtered on the server, newest first, sorted within what is loaded;
 * a row opens the run. The table scrolls in its own area, its header in view.
 */
function RunsList({ client, apiKey }: { client: ApiClient; apiKey: string }) {
  const router = useRouter();
  const [filters, setFilters] = useState<{ workflowSlug?: string; status?: string; operation?: string }>({});
  const [search, setSearch] = useState("");
  const [q, setQ] = useState("");
  const [period, setPeriod] = useState<Period>("any");
  const [sort, setSort] = useState<{ key: SortKey; descending: boolean }>({ key: "created", descending: true });
  useEffect(() => {
    const timer = setTimeout(() => setQ(search.trim()), 300);
    return () => clearTimeout(timer);
  }, [search]);
  // The period's start, fixed when it is chosen (a moving "now" would refetch on every render).
  const from = useMemo(() => (PERIODS[period] === null ? undefined : new Date(Date.now() - PERIODS[period]!).toISOString()), [period]);
  const params = { ...filters, q: q || undefined, from };
  const workflows = useQuery({ queryKey: queryKeys.workflows(apiKey), queryFn: ({ signal }) => client.listWorkflows(signal) });
  const runs = useInfiniteQuery({
    queryKey: queryKeys.runs(apiKey, params),
    queryFn: ({ pageParam, signal }) => client.listRuns({ ...params, cursor: pageParam, limit: 50 }, signal),
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

  const rows = useMemo(() => {
    const by = SORT[sort.key];
    return (runs.data?.pages.flatMap((p) => p.runs) ?? []).sort((a, b) => (sort.descending ? by(b) - by(a) : by(a) - by(b)));
  }, [runs.data, sort]);
  const set = (key: keyof typeof filters) => (e: React.ChangeEvent<HTMLSelectElement>) => setFilters((f) => ({ ...f, [key]: e.target.value || undefined }));
  const header = (label: string, key?: SortKey, className = "") => (
    <th scope="col" className={`sticky top-0 z-10 bg-white py-2 pr-3 font-medium dark:bg-zinc-950 ${className}`} aria-sort={key && sort.key === key ? (sort.descending ? "descending" : "ascending") : undefined}>
      {key ? (
        <button type="button" className="inline-flex items-center gap-1 hover:underline" onClick={() => setSort((s) => ({ key, descending: s.key === key ? !s.descending : true }))}>
          {label}
          <span aria-hidden className="text-xs">
            {sort.key === key ? (sort.descending ? "▼" : "▲") : "↕"}
          </span>
        </button>
      ) : (
        label
      )}
    </th>
  );

  return (
    <Page width="full">
      <h1 className="text-2xl font-semibold">Runs</h1>
      <div className="mt-4 flex flex-wrap items-end gap-3" role="group" aria-label="Filters">
        <div className="w-full sm:w-72">
          <label htmlFor="run-search" className="sr-only">
            Search runs
          </label>
          <TextInput id="run-search" type="search" placeholder="Search input text or a run id…" value={search} onChange={(e) => setSearch(e.target.value)} />
        </div>
        <div className="flex flex-wrap gap-1" role="group" aria-label="Status">
          {([undefined, ...STATUSES] as const).map((s) => (
            <button
              key={s ?? "all"}
              type="button"
              aria-pressed={filters.status === s}
              onClick={() => setFilters((f) => ({ ...f, status: s }))}
              className={`rounded-full border px-3 py-1 text-sm ${filters.status === s ? "border-blue-700 bg-blue-700 text-white dark:border-blue-400 dark:bg-blue-400 dark:text-zinc-950" : "border-zinc-300 dark:border-zinc-700"}`}
            >
              {s === undefined ? "All" : s[0]!.toUpperCase() + s.slice(1)}
            </button>
          ))}
        </div>
        <Select compact value={filters.workflowSlug ?? ""} onChange={set("workflowSlug")} aria-label="Workflow">
          <option value="">Every workflow</option>
          {workflows.data?.map((w) => (
            <option key={w.slug} value={w.slug}>
              {w.slug}
            </option>
          ))}
        </Select>
        <Select compact value={filters.operation ?? ""} onChange={set("operation")} aria-label="Operation">
          <option value="">Every operation</option>
          <option value="generate.object">generate.object</option>
          <option value="stream.object">stream.object</option>
          <option value="generate.text">generate.text</option>
        </Select>
        <Select compact value={period} onChange={(e) => setPeriod(e.target.value as Period)} aria-label="Created">
          <option value="any">Any time</option>
          <option value="1h">Last hour</option>
          <option value="24h">Last 24 hours</option>
          <option value="7d">Last 7 days</option>
          <option value="30d">Last 30 days</option>
        </Select>
      </div>
      {runs.error ? (
        <p role="alert" className="mt-4 text-sm text-red-700 dark:text-red-400">
          {(runs.error as Error).message}
        </p>
      ) : null}
      <div className="mt-4 max-h-[calc(100dvh-15rem)] min-h-64 overflow-y-auto rounded border border-zinc-200 dark:border-zinc-800" tabIndex={0} role="region" aria-label="Runs table">
        <table className="w-full table-fixed text-left text-sm">
          <thead>
            <tr className="border-b border-zinc-300 dark:border-zinc-700">
              {header("Status", undefined, "w-28 pl-3")}
              {header("Workflow", undefined, "hidden w-40 md:table-cell")}
              {header("Input")}
              {header("Output", undefined, "hidden lg:table-cell")}
              {header("Tokens", "tokens", "hidden w-24 md:table-cell")}
              {header("Cost", "cost", "hidden w-28 md:table-cell")}
              {header("Duration", "duration", "hidden w-24 sm:table-cell")}
              {header("Started", "created", "w-28")}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr
                key={r.id}
                onClick={(e) => {
                  if (!(e.target as HTMLElement).closest("a")) router.push(`/runs/${r.id}`);
                }}
                className="cursor-pointer border-b border-zinc-100 align-top hover:bg-zinc-50 dark:border-zinc-900 dark:hover:bg-zinc-900"
              >
                <td className="py-2 pr-3 pl-3">
                  <Badge tone={statusTone(r.status)} className="px-1.5 py-0.5">
                    {r.status}
                  </Badge>
                  {r.attempts > 1 ? <span className="ml-1 text-xs text-zinc-600 dark:text-zinc-400">×{r.attempts}</span> : null}
                </td>
                <td className="hidden py-2 pr-3 md:table-cell">
                  <span className="block truncate">
                    {r.workflowSlug}
                    {isDraft(r) ? (
                      <Badge tone="warning" className="ml-1 text-xs" >
                        draft
                      </Badge>
                    ) : null}
                  </span>
                  <span className="block truncate text-xs text-zinc-600 dark:text-zinc-400">{r.operation}</span>
                </td>
                <td className="py-2 pr-3">
                  {/* The row's one link: keyboard users and screen readers open the run here. */}
                  <Link href={`/runs/${r.id}`} className="block truncate hover:underline" title={r.id}>
                    {preview(r.input) || <span className="font-mono">{r.id}</span>}
                  </Link>
                  <span className="block truncate text-xs text-zinc-600 md:hidden dark:text-zinc-400">
                    {r.workflowSlug}
                    {isDraft(r) ? " · draft" : ""}
                  </span>
                </td>
                <td className="hidden py-2 pr-3 lg:table-cell">
                  <span className={`block truncate ${r.error ? "text-red-800 dark:text-red-300" : "font-mono text-xs"}`}>{r.error ? `${r.error.code}: ${r.error.detail}` : preview(r.outputPreview ?? r.output)}</span>
                </td>
                <td className="hidden py-2 pr-3 tabular-nums md:table-cell">
                  {r.metadata.inputTokens} → {r.metadata.outputTokens}
                </td>
                <td className="hidden py-2 pr-3 tabular-nums md:table-cell">{formatUsd(r.metadata.cost)}</td>
                <td className="hidden py-2 pr-3 tabular-nums sm:table-cell">{r.status === "running" ? "…" : formatDuration(r.metadata.durationInMs)}</td>
                <td className="py-2 pr-3">
                  <time dateTime={r.createdAt} title={new Date(r.createdAt).toLocaleString()}>
                    {formatAgo(r.createdAt)}
                  </time>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {rows.length === 0 && !runs.isLoading ? <p className="p-4 text-sm">{q || filters.status || filters.workflowSlug || filters.operation || from ? "No runs match." : "No runs yet."}</p> : null}
        <div ref={sentinel} className="p-3">
          {runs.hasNextPage ? (
            <Button onClick={() => void runs.fetchNextPage()} disabled={runs.isFetchingNextPage}>
              {runs.isFetchingNextPage ? "Loading…" : "Load more"}
            </Button>
          ) : null}
        </div>
      </div>
      <p className="mt-2 text-xs text-zinc-600 dark:text-zinc-400">
        {rows.length} run{rows.length === 1 ? "" : "s"} loaded{runs.hasNextPage ? " (more as you scroll)" : ""}; sorting orders the loaded runs.
      </p>
    </Page>
  );
}
