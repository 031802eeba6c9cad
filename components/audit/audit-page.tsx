"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import type { ApiClient, AuditFilters } from "@/lib/client/api";
import { queryKeys } from "@/lib/client/query-keys";
import { RequireKey } from "../require-key";
import { Badge } from "../ui/badge";
import { Button } from "../ui/button";
import { Field, TextInput } from "../ui/field";
import { ErrorAlert, Panel } from "../ui/panel";
import { Page } from "../ui/page";
import { ScrollTable } from "../ui/scroll-table";
import { TableHead } from "../ui/table-head";
import { AuditChanges } from "./audit-changes";

const td = "py-1.5 pr-3 align-top";

/** The audit log (admin keys): who changed what, when and from where, filtered, a page at a time. */
export function AuditPage() {
  return <RequireKey>{(client, apiKey) => <Audit client={client} apiKey={apiKey} />}</RequireKey>;
}

function Audit({ client, apiKey }: { client: ApiClient; apiKey: string }) {
  const me = useQuery({ queryKey: queryKeys.me(apiKey), queryFn: ({ signal }) => client.me(signal) });
  const [filters, setFilters] = useState<AuditFilters>({});
  return (
    <Page width="full">
      <h1 className="text-2xl font-semibold" tabIndex={-1}>
        Audit log
      </h1>
      <p className="mt-1 text-sm text-zinc-700 dark:text-zinc-300">Every change to keys, workflows and their labels, contexts, suites and share links: who made it, when, from where, and what changed.</p>
      {me.data && !me.data.admin ? (
        <p className="mt-4 text-sm">Only admin keys may read the audit log.</p>
      ) : me.data ? (
        <>
          <AuditFilterForm onApply={setFilters} />
          <AuditTable client={client} apiKey={apiKey} filters={filters} />
        </>
      ) : null}
    </Page>
  );
}

function AuditFilterForm({ onApply }: { onApply(filters: AuditFilters): void }) {
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const text = (name: string) => String(data.get(name) ?? "").trim() || undefined;
    const instant = (name: string) => {
      const value = text(name);
      return value ? new Date(value).toISOString() : undefined;
    };
    onApply({ actor: text("actor"), action: text("action"), subject: text("subject"), from: instant("from"), to: instant("to") });
  };
  return (
    <Panel className="mt-4" aria-labelledby="audit-filters">
      <h2 id="audit-filters" className="sr-only">
        Filters
      </h2>
      <form onSubmit={submit} className="grid grid-cols-1 gap-3 sm:grid-cols-2 lg:grid-cols-[repeat(5,minmax(0,1fr))_auto] lg:items-end">
        <Field id="audit-actor" label="Actor (key id)">
          <TextInput id="audit-actor" name="actor" placeholder="key_…" autoComplete="off" />
        </Field>
        <Field id="audit-action" label="Action starts with">
          <TextInput id="audit-action" name="action" placeholder="key. or workflow.label." autoComplete="off" />
        </Field>
        <Field id="audit-subject" label="Subject">
          <TextInput id="audit-subject" name="subject" placeholder="workflow:invoice" autoComplete="off" />
        </Field>
        <Field id="audit-from" label="From">
          <TextInput id="audit-from" name="from" type="datetime-local" />
        </Field>
        <Field id="audit-to" label="To">
          <TextInput id="audit-to" name="to" type="datetime-local" />
        </Field>
        <Button type="submit" variant="primary" size="lg">
          Apply
        </Button>
      </form>
    </Panel>
  );
}

function AuditTable({ client, apiKey, filters }: { client: ApiClient; apiKey: string; filters: AuditFilters }) {
  const pages = useInfiniteQuery({
    queryKey: queryKeys.audit(apiKey, { ...filters }),
    queryFn: ({ pageParam, signal }) => client.listAudit({ ...filters, cursor: pageParam }, signal),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const events = pages.data?.pages.flatMap((p) => p.events) ?? [];
  return (
    <div className="mt-4">
      {pages.error ? <ErrorAlert>{(pages.error as Error).message}</ErrorAlert> : null}
      <ScrollTable className="w-full min-w-[56rem] text-left text-sm" aria-label="Audit log">
        <TableHead columns={["When", "Who", "Where", "What", "Changes"]} />
        <tbody>
          {events.map((e) => (
            <tr key={e.seq} className="border-b border-zinc-100 dark:border-zinc-900">
              <td className={`${td} whitespace-nowrap`}>
                <time dateTime={e.at}>{new Date(e.at).toLocaleString()}</time>
              </td>
              <td className={td}>
                {e.actor.label} {e.actor.kind === "key" ? null : <Badge tone="info">{e.actor.kind}</Badge>}
                {e.actor.id ? <div className="font-mono text-xs text-zinc-600 dark:text-zinc-400">{e.actor.id}</div> : null}
              </td>
              <td className={td}>
                <div className="font-mono text-xs">{e.ip ?? "—"}</div>
                {e.userAgent ? (
                  <div className="max-w-[14rem] truncate text-xs text-zinc-600 dark:text-zinc-400" title={e.userAgent}>
                    {e.userAgent}
                  </div>
                ) : null}
              </td>
              <td className={td}>
                <div className="font-mono">{e.action}</div>
                <div className="text-xs text-zinc-700 dark:text-zinc-300">
                  {e.subject.kind} <span className="font-mono">{e.subject.id}</span>
                </div>
              </td>
              <td className={`${td} max-w-[32rem]`}>
                <AuditChanges changes={e.changes} />
              </td>
            </tr>
          ))}
        </tbody>
      </ScrollTable>
      {pages.isSuccess && events.length === 0 ? <p className="mt-3 text-sm">No changes match.</p> : null}
      {pages.hasNextPage ? (
        <Button className="mt-3" onClick={() => void pages.fetchNextPage()} disabled={pages.isFetchingNextPage}>
          {pages.isFetchingNextPage ? "Loading…" : "Older changes"}
        </Button>
      ) : null}
    </div>
  );
}
