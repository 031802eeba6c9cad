"use client";

import { useQuery } from "@tanstack/react-query";
import { useCallback, useEffect, useMemo, useState } from "react";
import { ApiError, type FieldProblem } from "@/lib/client/api";
import {
  CompositionError,
  DEFAULT_CALLBACK_URL,
  estimateInputTokens,
  OPERATIONS,
  parseJsonOrUndefined,
  toPermalinkHash,
  toRequestBody,
} from "@/lib/client/composition";
import { queryKeys } from "@/lib/client/query-keys";
import { schemaPathFor } from "@/lib/client/schema-path";
import { toCurl, toFetch } from "@/lib/client/snippets";
import { useApiKey } from "../key-context";
import { SignIn } from "../sign-in";
import { AttachmentsField } from "./attachments-field";
import { ContextsField, InputField, OperationAndWorkflow } from "./composer-fields";
import { CallbackFields, ThreadField } from "./delivery-fields";
import { ModelBanner } from "./model-banner";
import { Results } from "./results";
import { RunBar, type CopyTarget } from "./run-bar";
import { SchemaSection } from "./schema-section";
import { useComposition } from "./use-composition";
import { useInbox } from "./use-inbox";
import { useRun } from "./use-run";
import { useShortcuts } from "./use-shortcuts";
import { useStoredList } from "./use-stored-list";

export function Playground() {
  const { apiKey, client, signOut } = useApiKey();
  if (apiKey === null) return null; // reading the session
  if (!apiKey || !client) return <SignIn />;
  return <Composer apiKey={apiKey} onUnauthorized={() => signOut("That key is not valid or has been revoked. Sign in again.")} />;
}

/**
 * The playground's layout: the composer (fields, schema, run bar) on one side, the results on the
 * other. State lives in hooks (composition, runs, inbox, recent threads); each section is its own
 * component.
 */
function Composer({ apiKey, onUnauthorized }: { apiKey: string; onUnauthorized(): void }) {
  const { client } = useApiKey();
  const workflows = useQuery({ queryKey: queryKeys.workflows(apiKey), queryFn: ({ signal }) => client!.listWorkflows(signal) });
  const contexts = useQuery({ queryKey: queryKeys.contexts(apiKey), queryFn: ({ signal }) => client!.listContexts(signal) });
  const { c, setC, update, history, remember } = useComposition(workflows.data?.[0]?.slug);
  const [localError, setLocalError] = useState<FieldProblem | null>(null);
  const [copied, setCopied] = useState<CopyTarget | null>(null);
  const { state: run, start, cancel } = useRun(client);
  // Compare: the same composition run again (on another workflow, or the same one) side by side.
  const [compareWith, setCompareWith] = useState("");
  const { state: runB, start: startB, cancel: cancelB } = useRun(client);
  const [threads, rememberThread] = useStoredList<string>("genserve.threads", 20);
  const inbox = useInbox(client, (url) => setC((prev) => (prev.callbackUrl === DEFAULT_CALLBACK_URL ? { ...prev, callbackUrl: url } : prev)));

  useEffect(() => {
    if ([workflows.error, contexts.error].some((e) => e instanceof ApiError && e.code === "unauthorized")) onUnauthorized();
  }, [workflows.error, contexts.error, onUnauthorized]);
  const apiError = run.status === "error" ? run.error : null;
  useEffect(() => {
    if (apiError?.code === "unauthorized") onUnauthorized();
  }, [apiError, onUnauthorized]);
  useEffect(() => {
    if (run.status === "done" && run.operation === "stream-object" && c.threadId) rememberThread(c.threadId);
  }, [run.status, run.operation, c.threadId, rememberThread]);

  const isObject = c.operation !== "generate-text";
  const isStream = c.operation === "stream-object";
  const schema = useMemo(() => parseJsonOrUndefined(c.schemaText), [c.schemaText]);
  const problems: FieldProblem[] = [...(apiError?.errors ?? []), ...(localError ? [localError] : [])];
  const errorsAt = (prefix: string) => problems.filter((p) => p.path === prefix || p.path.startsWith(`${prefix}/`));
  // An output that failed validation names places in the output; pin each to the schema rule for it.
  const outputProblems: FieldProblem[] =
    apiError?.code === "output_invalid" ? apiError.errors.map((e) => ({ path: `/schema${schemaPathFor(schema, e.path)}`, message: `output ${e.path}: ${e.message}` })) : [];

  const runNow = useCallback(() => {
    setLocalError(null);
    let body: Record<string, unknown>;
    try {
      body = toRequestBody(c);
    } catch (error) {
      if (error instanceof CompositionError) setLocalError({ path: error.path, message: error.message });
      return;
    }
    remember(c);
    void start(c.operation, body);
    if (compareWith) void startB(c.operation, { ...body, workflowSlug: compareWith === "(same)" ? c.workflowSlug : compareWith });
  }, [c, remember, start, startB, compareWith]);
  const running = run.status === "running" || runB.status === "running";
  const cancelAll = useCallback(() => {
    cancel();
    cancelB();
  }, [cancel, cancelB]);
  useShortcuts({ run: runNow, cancel: cancelAll, running });

  const copy = async (what: CopyTarget) => {
    const operation = OPERATIONS.find((o) => o.value === c.operation)!;
    let body: Record<string, unknown> = {};
    try {
      body = toRequestBody(c);
    } catch {
      // An incomplete composition is copied as far as it goes.
    }
    const snippet = { origin: window.location.origin, path: operation.path, body, accept: isStream ? "text/event-stream" : undefined };
    const text = what === "curl" ? toCurl(snippet) : what === "fetch" ? toFetch(snippet) : `${window.location.origin}/${toPermalinkHash(c)}`;
    if (what === "link") window.history.replaceState(null, "", toPermalinkHash(c));
    await navigator.clipboard.writeText(text);
    setCopied(what);
    setTimeout(() => setCopied(null), 2000);
  };

  const selectedWorkflow = workflows.data?.find((w) => w.slug === c.workflowSlug.split("@")[0]);
  const estimate = estimateInputTokens(c, selectedWorkflow, contexts.data ?? []);
  const inboxRunId = run.status === "done" && run.operation !== "stream-object" && inbox && c.callbackUrl === inbox.url ? run.runId : null;

  return (
    // minmax(0, 1fr): a column never grows past its share for a long word or option inside it.
    <main className="mx-auto grid max-w-[1600px] grid-cols-[minmax(0,1fr)] gap-6 px-4 py-6 lg:grid-cols-[minmax(0,1fr)_minmax(0,1fr)]">
      {client && selectedWorkflow ? <ModelBanner client={client} apiKey={apiKey} alias={selectedWorkflow.model} /> : null}
      <form
        aria-label="Compose a run"
        className="space-y-4"
        onSubmit={(e) => {
          e.preventDefault();
          runNow();
        }}
      >
        <OperationAndWorkflow c={c} update={update} workflows={workflows.data} loading={workflows.isLoading} errorsAt={errorsAt} />
        <ContextsField c={c} update={update} contexts={contexts.data} errorsAt={errorsAt} fromWorkflow={selectedWorkflow?.contexts} />
        <InputField c={c} update={update} errorsAt={errorsAt} example={selectedWorkflow?.example} withSchema={isObject} />
        <AttachmentsField attachments={c.attachments} onChange={(next) => update("attachments", next)} problems={errorsAt("/attachments")} />
        {isStream ? <ThreadField c={c} update={update} recent={threads} problems={errorsAt("/threadId")} /> : <CallbackFields c={c} update={update} problems={errorsAt("/callback")} />}
        {isObject ? <SchemaSection schemaText={c.schemaText} workflowSlug={c.workflowSlug} onChange={(text) => update("schemaText", text)} problems={[...errorsAt("/schema"), ...outputProblems]} onRun={runNow} /> : null}
        <p className="text-sm text-zinc-700 dark:text-zinc-300" aria-label="Pre-flight">
          Estimated input: about {estimate.toLocaleString()} tokens (workflow instructions, contexts, attachments, input{isObject ? ", schema" : ""}).
        </p>
        <RunBar
          canRun={run.status !== "running" && Boolean(c.workflowSlug) && c.input.trim() !== ""}
          running={running}
          onCancel={cancelAll}
          compareWith={compareWith}
          onCompareWith={setCompareWith}
          workflows={workflows.data}
          copied={copied}
          onCopy={(what) => void copy(what)}
          history={history}
          onRestore={setC}
        />
      </form>
      <Results
        run={run}
        runB={runB}
        comparing={compareWith !== "" && runB.status !== "idle"}
        schema={schema}
        client={client}
        apiKey={apiKey}
        inbox={inboxRunId && inbox && client ? { client, apiKey, inboxId: inbox.id, runId: inboxRunId } : null}
      />
    </main>
  );
}
