"use client";

import { TableHead } from "../ui/table-head";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import type { ApiClient, RunSummary } from "@/lib/client/api";
import { useState } from "react";
import { emptyComposition, parseJsonOrUndefined, toPermalinkHash, type Operation } from "@/lib/client/composition";
import { formatAgo, formatDuration, formatUsd } from "@/lib/client/format";
import { compositionSnippet, toCurl } from "@/lib/client/snippets";
import { queryKeys } from "@/lib/client/query-keys";
import { RequireKey } from "../require-key";
import { SaveAsCase } from "../suites/save-as-case";
import { RunActions } from "./run-actions";
import { DraftPanel } from "./draft-panel";
import { Badge, statusTone } from "../ui/badge";
import { Button } from "../ui/button";
import { FailureAlert } from "../ui/failure-alert";
import { JsonView, problemMarks } from "../ui/json-view";
import { Page } from "../ui/page";
import { Panel } from "../ui/panel";
import { ScrollTable } from "../ui/scroll-table";

export function RunDetailPage({ id }: { id: string }) {
  return <RequireKey>{(client, apiKey) => <RunDetail client={client} apiKey={apiKey} id={id} />}</RequireKey>;
}

const OPERATION: Record<RunSummary["operation"], Operation> = { "generate.object": "generate-object", "stream.object": "stream-object", "generate.text": "generate-text" };

function RunDetail({ client, apiKey, id }: { client: ApiClient; apiKey: string; id: string }) {
  const run = useQuery({ queryKey: queryKeys.run(apiKey, id), queryFn: ({ signal }) => client.getRun(id, signal) });
  const [copied, setCopied] = useState<"id" | "curl" | null>(null);
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
  const composition = {
    ...emptyComposition(r.schema ? JSON.stringify(r.schema, null, 2) : "{}"),
    operation: OPERATION[r.operation],
    workflowSlug: r.workflowVersion && r.workflowVersion !== "config" ? `${r.workflowSlug}@${r.workflowVersion}` : r.workflowSlug,
    contextSlugs: r.contextSlugs,
    input: r.input,
    ...(r.callback ? { callbackUrl: r.callback.url, customPropertiesText: JSON.stringify(r.callback.customProperties ?? {}) } : {}),
  };
  // A draft run reopens on the version it started from with its definition as the prompt's draft.
  const reopen = r.draft ? toPermalinkHash({ ...composition, workflowSlug: `${r.workflowSlug}@${r.draft.base}` }, r.draft.definition) : toPermalinkHash({ ...composition, workflowSlug: r.workflowSlug });
  const copyCurl = async () => {
    await navigator.clipboard.writeText(toCurl(compositionSnippet(composition, window.location.origin)));
    setCopied("curl");
    setTimeout(() => setCopied(null), 2_000);
  };
  const copyId = async () => {
    await navigator.clipboard.writeText(r.id);
    setCopied("id");
    setTimeout(() => setCopied(null), 2_000);
  };
  const block = "overflow-auto rounded bg-zinc-50 p-3 font-mono text-sm whitespace-pre-wrap [overflow-wrap:anywhere] dark:bg-zinc-900";
  const facts: [string, string][] = [
    ["Workflow", `${r.workflowSlug}${r.workflowVersion ? `@${r.workflowVersion}` : ""}${r.workflowLabel ? ` (${r.workflowLabel})` : ""}${r.draft ? " with an unsaved draft" : ""}`],
    ["Model", `${r.metadata.model.name || "—"} (${r.metadata.model.tag})`],
    ["Tokens", `${r.metadata.inputTokens} in → ${r.metadata.outputTokens} out`],
    ["Cost", formatUsd(r.metadata.cost)],
    ["Duration", formatDuration(r.metadata.durationInMs)],
    ["Attempts", String(r.attempts)],
  ];
  return (
    <Page width="wide">
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="mr-auto min-w-0 text-2xl font-semibold">
          Run <span className="font-mono text-xl [overflow-wrap:anywhere]">{r.id}</span>{" "}
          <Badge tone={statusTone(r.status)} className="align-middle text-sm">
            {r.status}
          </Badge>
        </h1>
        <Button onClick={() => void copyId()}>{copied === "id" ? "Copied" : "Copy run id"}</Button>
        <Button onClick={() => void copyCurl()}>{copied === "curl" ? "Copied" : "Copy as curl"}</Button>
        <Link href={`/${reopen}`} className="rounded bg-blue-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-blue-800">
          Open in playground
        </Link>
      </div>
      <dl className="mt-3 flex flex-wrap gap-x-6 gap-y-1 text-sm">
        {facts.map(([k, v]) => (
          <div key={k} className="flex gap-1.5">
            <dt className="text-zinc-600 dark:text-zinc-400">{k}</dt>
            <dd data-testid={`run-${k.toLowerCase()}`}>{v}</dd>
          </div>
        ))}
        <div className="flex gap-1.5">
          <dt className="text-zinc-600 dark:text-zinc-400">Started</dt>
          <dd>
            <time dateTime={r.createdAt} title={new Date(r.createdAt).toLocaleString()}>
              {formatAgo(r.createdAt)}
            </time>
          </dd>
        </div>
      </dl>
      {r.error ? (
        <div className="mt-4">
          <FailureAlert error={r.error} problems={r.error.errors ?? []} />
        </div>
      ) : null}
      <div className="mt-4 grid gap-4 md:grid-cols-2">
        <Panel aria-label="Input" className="min-w-0">
          <h2 className="text-lg font-semibold">Input</h2>
          {r.history && r.history.length > 0 ? <EarlierMessages history={r.history} /> : null}
          <pre className={`mt-2 max-h-[32rem] ${block}`}>{r.input}</pre>
          {r.contextSlugs.length > 0 ? <p className="mt-2 text-xs text-zinc-600 dark:text-zinc-400">With contexts: {r.contextSlugs.join(", ")}</p> : null}
        </Panel>
        <Panel aria-label="Output" className="min-w-0">
          <OutputView run={r} />
        </Panel>
      </div>
      {r.draft ? <DraftPanel draft={r.draft} slug={r.workflowSlug} /> : null}
      <RunTabs run={r} />
      {r.status === "succeeded" ? <SaveAsCase client={client} apiKey={apiKey} run={r} /> : null}
      {r.status === "succeeded" || r.status === "failed" || r.status === "cancelled" ? <RunActions client={client} run={r} /> : null}
    </Page>
  );
}

/** The earlier messages the request gave, sent to the model before the input (collapsed: they can be long). */
function EarlierMessages({ history }: { history: NonNullable<RunSummary["history"]> }) {
  return (
    <details className="mt-2 text-sm">
      <summary className="cursor-pointer text-zinc-700 dark:text-zinc-300">
        {history.length} earlier message{history.length === 1 ? "" : "s"} before the input
      </summary>
      <ol aria-label="Earlier messages" className="mt-2 space-y-2">
        {history.map((m, i) => (
          <li key={i}>
            <span className="text-xs font-medium text-zinc-600 dark:text-zinc-400">{m.role}</span>
            <pre className="mt-1 max-h-48 overflow-auto rounded bg-zinc-50 p-2 text-xs whitespace-pre-wrap dark:bg-zinc-900">{m.content}</pre>
          </li>
        ))}
      </ol>
    </details>
  );
}

/** The output as JSON (or text); a failed run's last output instead, its failing places marked; a cancelled run's output so far. */
function OutputView({ run: r }: { run: RunSummary }) {
  const block = "mt-2 max-h-[32rem] overflow-auto rounded bg-zinc-50 p-3 dark:bg-zinc-900";
  if (r.status === "failed" || r.status === "cancelled") {
    const text = r.error?.lastOutput;
    const value = text === undefined ? undefined : parseJsonOrUndefined(text);
    const cancelled = r.status === "cancelled";
    return (
      <>
        <h2 className="text-lg font-semibold">{cancelled ? "Output before it was cancelled" : "What the model returned"}</h2>
        {text === undefined ? (
          <p className="mt-2 text-sm text-zinc-700 dark:text-zinc-300">
            {cancelled ? "No output was kept: the run was cancelled before the model streamed any." : "No output was kept: the run failed before the model answered, or its failure was not about the output."}
          </p>
        ) : value === undefined ? (
          <pre className={`${block} font-mono text-sm whitespace-pre-wrap [overflow-wrap:anywhere]`} data-testid="run-output">
            {text}
          </pre>
        ) : (
          <JsonView value={value} marks={problemMarks(r.error?.errors ?? [])} className={block} data-testid="run-output" />
        )}
      </>
    );
  }
  return (
    <>
      <h2 className="text-lg font-semibold">Output</h2>
      {r.status === "running" ? (
        <p className="mt-2 text-sm">Still running.</p>
      ) : typeof r.output === "string" ? (
        <pre className={`${block} font-mono text-sm whitespace-pre-wrap [overflow-wrap:anywhere]`} data-testid="run-output">
          {r.output}
        </pre>
      ) : (
        <JsonView value={r.output} className={block} data-testid="run-output" />
      )}
    </>
  );
}

type RunTab = "details" | "schema" | "raw" | "deliveries";

/** The rest of the record, a tab each: details, the schema, the raw record, callback deliveries. */
function RunTabs({ run: r }: { run: RunSummary }) {
  const [tab, setTab] = useState<RunTab>("details");
  const tabs: [RunTab, string][] = [
    ["details", "Details"],
    ...(r.schema ? ([["schema", "Schema"]] as [RunTab, string][]) : []),
    ["deliveries", "Deliveries"],
    ["raw", "Raw"],
  ];
  const block = "mt-3 max-h-[32rem] overflow-auto rounded bg-zinc-50 p-3 dark:bg-zinc-900";
  return (
    <Panel className="mt-4">
      <div role="tablist" aria-label="Run record" className="flex flex-wrap gap-1 border-b border-zinc-200 dark:border-zinc-800">
        {tabs.map(([id, label]) => (
          <button
            key={id}
            type="button"
            role="tab"
            aria-selected={tab === id}
            onClick={() => setTab(id)}
            className={`-mb-px border-b-2 px-3 py-1.5 text-sm font-medium ${tab === id ? "border-blue-700 dark:border-blue-400" : "border-transparent text-zinc-700 dark:text-zinc-300"}`}
          >
            {label}
          </button>
        ))}
      </div>
      <div role="tabpanel" aria-label={tabs.find(([id]) => id === tab)?.[1]}>
        {tab === "details" ? (
          <dl className="mt-3 grid grid-cols-[max-content_minmax(0,1fr)] gap-x-6 gap-y-1 text-sm">
            {(
              [
                ["Operation", r.operation],
                ["Contexts", r.contextSlugs.join(", ") || "—"],
                ["Decoding", DECODING[r.decoding ?? ""] ?? "—"],
                ["Created", new Date(r.createdAt).toLocaleString()],
                ["Finished", r.finishedAt ? new Date(r.finishedAt).toLocaleString() : "—"],
                ["Callback", r.callback?.url ?? "—"],
                ["Attachments", r.attachments.length ? r.attachments.map((a) => `${String(a.name ?? a.url ?? "file")} (${String(a.mimeType ?? "?")}, ${String(a.bytes ?? "?")} B)`).join(", ") : "—"],
                ...(r.evaluationId ? ([["Evaluation", r.evaluationId]] as const) : []),
              ] as const
            ).map(([k, v]) => (
              <div key={k} className="contents">
                <dt className="text-zinc-600 dark:text-zinc-400">{k}</dt>
                <dd className="[overflow-wrap:anywhere]">{v}</dd>
              </div>
            ))}
          </dl>
        ) : tab === "schema" ? (
          <JsonView value={r.schema} className={block} />
        ) : tab === "raw" ? (
          <JsonView value={r} className={block} />
        ) : (
          <Deliveries run={r} />
        )}
      </div>
    </Panel>
  );
}

function Deliveries({ run: r }: { run: RunSummary }) {
  if (!r.deliveries) return <p className="mt-3 text-sm text-zinc-600 dark:text-zinc-400">{r.operation === "stream.object" ? "Streamed runs have no callback." : "No callback event yet."}</p>;
  return (
    <>
      <p className="mt-3 text-sm">
        Event <span className="font-mono">{r.deliveries.eventId}</span> to <span className="font-mono [overflow-wrap:anywhere]">{r.deliveries.url}</span>: {r.deliveries.status}
        {r.deliveries.nextAttemptAt ? `, next attempt ${new Date(r.deliveries.nextAttemptAt).toLocaleString()}` : ""}
      </p>
      <ScrollTable className="mt-2 w-full text-left text-sm">
        <TableHead columns={["Attempted", "Result", "Duration", "Next attempt"]} />
        <tbody>
          {r.deliveries.log.map((d, i) => (
            <tr key={i} className="border-b border-zinc-100 dark:border-zinc-900">
              <td className="py-1 pr-3">{new Date(d.attemptedAt).toLocaleString()}</td>
              <td className="py-1 pr-3">{d.statusCode ?? d.error}</td>
              <td className="py-1 pr-3">{formatDuration(d.durationMs)}</td>
              <td className="py-1">{d.nextAttemptAt ? new Date(d.nextAttemptAt).toLocaleString() : "—"}</td>
            </tr>
          ))}
        </tbody>
      </ScrollTable>
    </>
  );
}

const DECODING: Record<string, string> = {
  grammar: "constrained by a grammar for the whole schema",
  "grammar+validate": "constrained by a grammar for part of the schema, then validated",
  provider: "the provider's structured output, then validated",
  prompt: "schema in the prompt, then validated",
  none: "text",
};
