"use client";

import { useQuery } from "@tanstack/react-query";
import type { ApiClient } from "@/lib/client/api";
import { queryKeys } from "@/lib/client/query-keys";

/** The newest turns shown; the thread's count says how many there are in all. */
const SHOWN = 20;

/**
 * The newest turns of the thread a streamed run continues, above the input: what the model will be
 * told came before. Read again whenever a run of the thread ends (`after`).
 */
export function ThreadTranscript({ client, apiKey, threadId, after }: { client: ApiClient; apiKey: string; threadId: string; after: string | null }) {
  const thread = useQuery({
    queryKey: queryKeys.thread(apiKey, threadId, after),
    // The newest page, newest first: shown oldest first.
    queryFn: async ({ signal }) => {
      const thread = await client.getThread(threadId, signal, { newest: true, limit: SHOWN });
      return thread && { ...thread, messages: [...thread.messages].reverse() };
    },
    placeholderData: (previous) => previous,
    // The run's turns are stored as it ends: read again, briefly, until its reply is there.
    refetchInterval: (query) => (after && query.state.data !== undefined && !query.state.data?.messages.some((m) => m.runId === after) ? 500 : false),
  });
  const messages = thread.data?.messages ?? [];
  const count = thread.data?.messageCount ?? 0;
  return (
    <section aria-label="Thread so far" className="rounded border border-zinc-200 text-sm dark:border-zinc-800">
      <h3 className="border-b border-zinc-200 px-3 py-1.5 text-xs font-medium text-zinc-700 dark:border-zinc-800 dark:text-zinc-300">
        Thread <span className="font-mono">{threadId}</span> · {count === 0 ? "no turns yet: this run starts it" : `${count} turn${count === 1 ? "" : "s"} so far${count > messages.length ? ` (the newest ${messages.length} shown)` : ""}`}
      </h3>
      {messages.length > 0 ? (
        <ol className="max-h-60 space-y-2 overflow-y-auto p-3">
          {messages.map((m, i) => (
            <li key={i} className={`rounded px-2 py-1 ${m.role === "user" ? "bg-blue-50 dark:bg-blue-950" : "bg-zinc-100 dark:bg-zinc-900"}`}>
              <span className="mr-2 text-xs font-semibold uppercase text-zinc-600 dark:text-zinc-400">{m.role === "user" ? "You" : "Model"}</span>
              <span className="whitespace-pre-wrap [overflow-wrap:anywhere]">{m.content.length > 600 ? `${m.content.slice(0, 600)}…` : m.content}</span>
            </li>
          ))}
        </ol>
      ) : null}
    </section>
  );
}
