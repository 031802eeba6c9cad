"use client";

import { useQuery } from "@tanstack/react-query";
import type { ApiClient } from "@/lib/client/api";
import { queryKeys } from "@/lib/client/query-keys";
import { Panel } from "../ui/panel";

/**
 * The delivered callback event of the last run, when its callback went to the built-in inbox:
 * payload, signing headers and whether the signature verified. Polls until it arrives.
 */
export function InboxPanel({ client, apiKey, inboxId, runId }: { client: ApiClient; apiKey: string; inboxId: string; runId: string }) {
  const inbox = useQuery({
    queryKey: queryKeys.inbox(apiKey, inboxId),
    queryFn: ({ signal }) => client.getInbox(inboxId, signal),
    refetchInterval: (query) => (query.state.data?.events.some((e) => matches(e.body, runId)) ? false : 1_000),
  });
  const event = inbox.data?.events.find((e) => matches(e.body, runId));
  return (
    <Panel aria-label="Callback" className="text-sm">
      <h2 className="text-lg font-semibold">Callback</h2>
      {!event ? (
        <p className="mt-2 text-zinc-700 dark:text-zinc-300">Waiting for the callback event in the built-in inbox…</p>
      ) : (
        <>
          <p className="mt-2 flex flex-wrap items-center gap-2">
            <span>Callback delivered at {new Date(event.receivedAt).toLocaleTimeString()}</span>
            <span
              className={`rounded px-2 py-0.5 ${event.verified ? "bg-green-100 text-green-900 dark:bg-green-900 dark:text-green-100" : "bg-red-100 text-red-900 dark:bg-red-900 dark:text-red-100"}`}
            >
              {event.verified ? "Signature verified" : "Signature not verified"}
            </span>
          </p>
          <dl className="mt-2 grid grid-cols-[max-content_1fr] gap-x-4 font-mono text-xs">
            {["webhook-id", "webhook-timestamp", "webhook-signature"].map((name) => (
              <div key={name} className="contents">
                <dt>{name}</dt>
                <dd className="break-all">{event.headers[name]}</dd>
              </div>
            ))}
          </dl>
          <pre tabIndex={0} aria-label="Callback event payload" className="mt-2 max-h-64 overflow-auto rounded bg-zinc-50 p-2 font-mono text-xs dark:bg-zinc-900">{JSON.stringify(event.body, null, 2)}</pre>
        </>
      )}
    </Panel>
  );
}

function matches(body: unknown, runId: string): boolean {
  return (body as { data?: { runId?: string } } | null)?.data?.runId === runId;
}
