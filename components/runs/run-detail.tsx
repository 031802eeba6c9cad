"use client";

import { TableHead } from "../ui/table-head";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import type { ApiClient, RunSummary } from "@/lib/client/api";
import { emptyComposition, toPermalinkHash, type Operation } from "@/lib/client/composition";
import { formatDuration, formatUsd } from "@/lib/client/format";
import { queryKeys } from "@/lib/client/query-keys";
import { RequireKey } from "../require-key";
import { SaveAsCase } from "../suites/save-as-case";
import { RunActions } from "./run-actions";
import { Page } from "../ui/page";

export function RunDetailPage({ id }: { id: string }) {
  return <RequireKey>{(client, apiKey) => <RunDetail client={client} apiKey={apiKey} id={id} />}</RequireKey>;
}

const OPERATION: Record<RunSummary["operation"], Operation> = { "generate.object": "generate-object", "stream.object": "stream-object", "generate.text": "generate-text" };

function RunDetail({ client, apiKey, id }: { client: ApiClient; apiKey: string; id: string }) {
  const run = useQuery({ queryKey: queryKeys.run(apiKey, id), queryFn: ({ signal }) => client.getRun(id, signal) });
  if (run.isLoading) return <Page>Loading…</Page>;
  if (run.error || !run.data)
    return (
      <Page width="narrow">
        <h1 className="text-2xl font-semibold">Run {id}</h1>
        <p role="alert" className="mt-3 text-sm text-red-700 dark:text-red-400">
          {(run.error as Error)?.message ?? "Not found"}
        </p>
      </Page>
    );
  const r = run.data;
  const reopen = toPermalinkHash({
    ...emptyComposition(r.schema ? JSON.stringify(r.schema, null, 2) : "{}"),
    operation: OPERATION[r.operation],
    workflowSlug: r.workflowSlug,
    contextSlugs: r.contextSlugs,
    input: r.input,
    ...(r.callback ? { callbackUrl: r.callback.url, customPropertiesText: JSON.stringify(r.callback.customProperties ?? {}) } : {}),
  });
  const block = "mt-2 overflow-auto rounded bg-zinc-50 p-3 font-mono text-xs whitespace-pre-wrap dark:bg-zinc-900";
  return (
    <Page>
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="mr-auto text-2xl font-semibold">
          Run <span className="font-mono">{r.id}</span>
        </h1>
        <Link href={`/${reopen}`} className="rounded bg-blue-700 px-3 py-1.5 text-sm text-white">
          Open in playground
        </Link>
      </div>
      <dl className="mt-4 grid grid-cols-[max-content_1fr] gap-x-6 gap-y-1 text-sm">
        {(
          [
            ["Status", r.status],
            ["Operation", r.operation],
            ["Workflow", r.workflowSlug],
            ["Contexts", r.contextSlugs.join(", ") || "—"],
            ["Model", `${r.metadata.model.name || "—"} (${r.metadata.model.tag})`],
            ["Tokens in/out", `${r.metadata.inputTokens}/${r.metadata.outputTokens}`],
            ["Cost", formatUsd(r.metadata.cost)],
            ["Duration", formatDuration(r.metadata.durationInMs)],
            ["Attempts", String(r.attempts)],
            ["Decoding", DECODING[r.decoding ?? ""] ?? "—"],
            ["Created", new Date(r.createdAt).toLocaleString()],
            ["Callback", r.callback?.url ?? "—"],
            ...(r.evaluationId ? ([["Evaluation", r.evaluationId]] as const) : []),
          ] as const
        ).map(([k, v]) => (
          <div key={k} className="contents">
            <dt className="text-zinc-600 dark:text-zinc-400">{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      <h2 className="mt-6 text-lg font-semibold">Input</h2>
      <pre className={block}>{r.input}</pre>
      {r.schema ? (
        <>
          <h2 className="mt-6 text-lg font-semibold">Schema</h2>
          <pre className={block}>{JSON.stringify(r.schema, null, 2)}</pre>
        </>
      ) : null}
      {r.attachments.length > 0 ? (
        <>
          <h2 className="mt-6 text-lg font-semibold">Attachments</h2>
          <pre className={block}>{JSON.stringify(r.attachments, null, 2)}</pre>
        </>
      ) : null}
      <h2 className="mt-6 text-lg font-semibold">{r.error ? "Error" : "Output"}</h2>
      <pre className={block}>{r.error ? JSON.stringify(r.error, null, 2) : typeof r.output === "string" ? r.output : JSON.stringify(r.output, null, 2)}</pre>
      {r.status === "succeeded" ? <SaveAsCase client={client} apiKey={apiKey} run={r} /> : null}
      {r.status === "succeeded" || r.status === "failed" ? <RunActions client={client} run={r} /> : null}
      <h2 className="mt-6 text-lg font-semibold">Callback deliveries</h2>
      {r.deliveries ? (
        <>
          <p className="mt-1 text-sm">
            Event <span className="font-mono">{r.deliveries.eventId}</span> to <span className="break-all font-mono">{r.deliveries.url}</span>: {r.deliveries.status}
            {r.deliveries.nextAttemptAt ? `, next attempt ${new Date(r.deliveries.nextAttemptAt).toLocaleString()}` : ""}
          </p>
          <table className="mt-2 w-full text-left text-sm">
            <TableHead columns={["Attempted", "Result", "Duration", "Next attempt"]} />
            <tbody>
              {r.deliveries.log.map((d, i) => (
                <tr key={i} className="border-b border-zinc-100 dark:border-zinc-900">
                  <td className="py-1 pr-3">{new Date(d.attemptedAt).toLocaleString()}</td>
                  <td className="py-1 pr-3">{d.statusCode ?? d.error}</td>
                  <td className="py-1 pr-3">{d.durationMs} ms</td>
                  <td className="py-1">{d.nextAttemptAt ? new Date(d.nextAttemptAt).toLocaleString() : "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : (
        <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">{r.operation === "stream.object" ? "Streamed runs have no callback." : "No callback event yet."}</p>
      )}
    </Page>
  );
}

const DECODING: Record<string, string> = {
  grammar: "constrained by a grammar for the whole schema",
  "grammar+validate": "constrained by a grammar for part of the schema, then validated",
  provider: "the provider's structured output, then validated",
  prompt: "schema in the prompt, then validated",
  none: "text",
};
