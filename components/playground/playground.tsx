"use client";

import { ModelBanner } from "./model-banner";
import { useQuery } from "@tanstack/react-query";
import { useCallback, useEffect, useMemo, useState, type DragEvent } from "react";
import { ApiError, type FieldProblem } from "@/lib/client/api";
import {
  CompositionError,
  DEFAULT_CALLBACK_URL,
  emptyComposition,
  estimateTokens,
  fromPermalinkHash,
  OPERATIONS,
  toPermalinkHash,
  toRequestBody,
  type AttachmentDraft,
  type Composition,
  type Operation,
} from "@/lib/client/composition";
import { queryKeys } from "@/lib/client/query-keys";
import { schemaFromExample } from "@/lib/client/schema-from-example";
import { schemaPathFor } from "@/lib/client/schema-path";
import { toCurl, toFetch } from "@/lib/client/snippets";
import { SCHEMA_TEMPLATES } from "@/lib/client/templates";
import { useApiKey } from "../key-context";
import { SignIn } from "../sign-in";
import { Comparison } from "./comparison";
import { InboxPanel } from "./inbox-panel";
import { MetadataPanel } from "./metadata-panel";
import { ResultPanel } from "./result-panel";
import { SchemaEditor } from "./schema-editor";
import { useRun } from "./use-run";

const HISTORY_KEY = "genserve.history";
const THREADS_KEY = "genserve.threads";
const pretty = (value: unknown) => JSON.stringify(value, null, 2);
const field = "w-full rounded border border-zinc-400 bg-white px-2 py-1.5 text-sm dark:border-zinc-600 dark:bg-zinc-900";
const button = "rounded border border-zinc-400 px-2 py-1 text-sm hover:bg-zinc-100 dark:border-zinc-600 dark:hover:bg-zinc-800";

export function Playground() {
  const { apiKey, client, signOut } = useApiKey();
  if (apiKey === null) return null; // reading the session
  if (!apiKey || !client) return <SignIn />;
  return <Composer apiKey={apiKey} onUnauthorized={() => signOut("That key is not valid or has been revoked. Sign in again.")} />;
}

function Composer({ apiKey, onUnauthorized }: { apiKey: string; onUnauthorized(): void }) {
  const { client } = useApiKey();
  const [c, setC] = useState<Composition>(() => emptyComposition(pretty(SCHEMA_TEMPLATES[0]!.schema)));
  const [localError, setLocalError] = useState<{ path: string; message: string } | null>(null);
  const [exampleText, setExampleText] = useState("");
  const [showExample, setShowExample] = useState(false);
  const [attachmentUrl, setAttachmentUrl] = useState("");
  const [copied, setCopied] = useState<string | null>(null);
  const [history, setHistory] = useState<Composition[]>([]);
  const [dark, setDark] = useState(false);
  const { state: run, start, cancel } = useRun(client);
  // Compare: the same composition run again (on another workflow, or the same one) side by side.
  const [compareWith, setCompareWith] = useState("");
  const { state: runB, start: startB, cancel: cancelB } = useRun(client);
  const comparing = compareWith !== "" && runB.status !== "idle";

  const workflows = useQuery({ queryKey: queryKeys.workflows(apiKey), queryFn: ({ signal }) => client!.listWorkflows(signal) });
  const contexts = useQuery({ queryKey: queryKeys.contexts(apiKey), queryFn: ({ signal }) => client!.listContexts(signal) });

  useEffect(() => {
    if ([workflows.error, contexts.error].some((e) => e instanceof ApiError && e.code === "unauthorized")) onUnauthorized();
  }, [workflows.error, contexts.error, onUnauthorized]);

  // A permalink restores the whole composition; otherwise start from the first workflow.
  useEffect(() => {
    const restored = fromPermalinkHash(window.location.hash);
    if (restored) setC(restored);
    try {
      setHistory(JSON.parse(localStorage.getItem(HISTORY_KEY) ?? "[]") as Composition[]);
    } catch {
      setHistory([]);
    }
    const observer = new MutationObserver(() => setDark(document.documentElement.classList.contains("dark")));
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ["class"] });
    setDark(document.documentElement.classList.contains("dark"));
    return () => observer.disconnect();
  }, []);
  // A fresh built-in inbox receives the callbacks of this page's runs (pre-filled as callback URL).
  const [inbox, setInbox] = useState<{ id: string; url: string } | null>(null);
  useEffect(() => {
    let live = true;
    client
      ?.createInbox()
      .then((created) => {
        if (!live) return;
        setInbox(created);
        setC((prev) => (prev.callbackUrl === DEFAULT_CALLBACK_URL ? { ...prev, callbackUrl: created.url } : prev));
      })
      .catch(() => undefined);
    return () => void (live = false);
  }, [client]);
  // Threads this browser used recently, offered by the thread field.
  const [threads, setThreads] = useState<string[]>([]);
  useEffect(() => {
    try {
      setThreads(JSON.parse(localStorage.getItem(THREADS_KEY) ?? "[]") as string[]);
    } catch {
      setThreads([]);
    }
  }, []);
  useEffect(() => {
    if (run.status === "done" && run.operation === "stream-object" && c.threadId) {
      setThreads((prev) => {
        const next = [c.threadId, ...prev.filter((t) => t !== c.threadId)].slice(0, 20);
        localStorage.setItem(THREADS_KEY, JSON.stringify(next));
        return next;
      });
    }
  }, [run.status, run.operation, c.threadId]);
  const inboxRunId = run.status === "done" && run.operation !== "stream-object" && inbox && c.callbackUrl === inbox.url ? run.runId : null;

  useEffect(() => {
    if (!c.workflowSlug && workflows.data?.[0]) setC((prev) => ({ ...prev, workflowSlug: workflows.data[0]!.slug }));
  }, [workflows.data, c.workflowSlug]);

  const update = <K extends keyof Composition>(key: K, value: Composition[K]) => setC((prev) => ({ ...prev, [key]: value }));
  const isObject = c.operation !== "generate-text";
  const isStream = c.operation === "stream-object";

  const apiError = run.status === "error" ? run.error : null;
  useEffect(() => {
    if (apiError?.code === "unauthorized") onUnauthorized();
  }, [apiError, onUnauthorized]);
  const problems: FieldProblem[] = [...(apiError?.errors ?? []), ...(localError ? [localError] : [])];
  const errorsAt = (prefix: string) => problems.filter((p) => p.path === prefix || p.path.startsWith(`${prefix}/`));
  const unplaced = apiError && !["unauthorized"].includes(apiError.code) && (apiError.errors.length === 0 || apiError.errors.some((p) => !/^\/(schema|input|workflowSlug|contextSlugs|threadId|attachments|callback|type)/.test(p.path)));

  // An output that failed validation names places in the output; pin each to the schema rule for it.
  const outputProblems: FieldProblem[] =
    apiError?.code === "output_invalid"
      ? apiError.errors.map((e) => ({ path: `/schema${schemaPathFor(safeParse(c.schemaText), e.path)}`, message: `output ${e.path}: ${e.message}` }))
      : [];

  const body = useMemo(() => {
    try {
      return toRequestBody(c);
    } catch {
      return null;
    }
  }, [c]);

  const runNow = useCallback(() => {
    setLocalError(null);
    let requestBody: Record<string, unknown>;
    try {
      requestBody = toRequestBody(c);
    } catch (error) {
      if (error instanceof CompositionError) setLocalError({ path: error.path, message: error.message });
      return;
    }
    const next = [c, ...history.filter((h) => JSON.stringify(h) !== JSON.stringify(c))].slice(0, 20).map((h) => ({ ...h, attachments: [] }));
    setHistory(next);
    localStorage.setItem(HISTORY_KEY, JSON.stringify(next));
    void start(c.operation, requestBody);
    if (compareWith) void startB(c.operation, { ...requestBody, workflowSlug: compareWith === "(same)" ? c.workflowSlug : compareWith });
  }, [c, history, start, startB, compareWith]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
        event.preventDefault();
        runNow();
      } else if (event.key === "Escape" && (run.status === "running" || runB.status === "running")) {
        cancel();
        cancelB();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [runNow, cancel, cancelB, run.status, runB.status]);

  const addFiles = async (files: FileList | File[]) => {
    const drafts = await Promise.all(
      [...files].map(async (file): Promise<AttachmentDraft> => {
        const bytes = new Uint8Array(await file.arrayBuffer());
        let binary = "";
        for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
        return { name: file.name, mimeType: file.type || "text/plain", size: file.size, file: btoa(binary) };
      }),
    );
    update("attachments", [...c.attachments, ...drafts]);
  };

  const copy = async (what: "curl" | "fetch" | "link") => {
    const operation = OPERATIONS.find((o) => o.value === c.operation)!;
    const snippet = { origin: window.location.origin, path: operation.path, body: body ?? {}, accept: isStream ? "text/event-stream" : undefined };
    const text = what === "curl" ? toCurl(snippet) : what === "fetch" ? toFetch(snippet) : `${window.location.origin}/${toPermalinkHash(c)}`;
    if (what === "link") window.history.replaceState(null, "", toPermalinkHash(c));
    await navigator.clipboard.writeText(text);
    setCopied(what);
    setTimeout(() => setCopied(null), 2000);
  };

  const selectedWorkflow = workflows.data?.find((w) => w.slug === c.workflowSlug);
  const contextChars =
    (contexts.data ?? []).filter((x) => c.contextSlugs.includes(x.slug) || selectedWorkflow?.contexts.includes(x.slug)).reduce((n, x) => n + x.size, 0) ?? 0;
  const attachmentChars = c.attachments.reduce((n, a) => n + (/^https?:/.test(a.file) ? 0 : Math.floor((a.file.length * 3) / 4)), 0);
  const estimate = estimateTokens((selectedWorkflow?.instructionsChars ?? 0) + c.input.length + contextChars + attachmentChars + (isObject ? c.schemaText.length : 0));
  const status =
    run.status === "running" ? "Generating…" : run.status === "done" ? "Complete" : run.status === "error" ? `Failed: ${run.error?.detail ?? ""}` : run.status === "cancelled" ? "Cancelled" : "";

  return (
    <main className="mx-auto grid max-w-[1600px] gap-6 px-4 py-6 lg:grid-cols-2">
      {client && selectedWorkflow ? <ModelBanner client={client} apiKey={apiKey} alias={selectedWorkflow.model} /> : null}
      <form
        aria-label="Compose a run"
        className="space-y-4"
        onSubmit={(e) => {
          e.preventDefault();
          runNow();
        }}
      >
        <div className="grid gap-4 sm:grid-cols-2">
          <div>
            <label htmlFor="operation" className="block text-sm font-medium">
              Operation
            </label>
            <select id="operation" className={field} value={c.operation} onChange={(e) => update("operation", e.target.value as Operation)}>
              {OPERATIONS.map((o) => (
                <option key={o.value} value={o.value}>
                  {o.label}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor="workflow" className="block text-sm font-medium">
              Workflow
            </label>
            <select id="workflow" className={field} value={c.workflowSlug} onChange={(e) => update("workflowSlug", e.target.value)} aria-describedby="workflow-help workflow-error">
              {workflows.data?.length === 0 ? <option value="">No workflows configured</option> : null}
              {workflows.data?.map((w) => (
                <option key={w.slug} value={w.slug}>
                  {w.slug} ({w.model})
                </option>
              ))}
            </select>
            <p id="workflow-help" className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">
              {selectedWorkflow?.description ?? (workflows.isLoading ? "Loading workflows…" : "")}
            </p>
            <FieldErrors id="workflow-error" problems={errorsAt("/workflowSlug")} />
          </div>
        </div>

        <div>
          <label htmlFor="contexts" className="block text-sm font-medium">
            Contexts
          </label>
          <select
            id="contexts"
            multiple
            className={`${field} h-20`}
            value={c.contextSlugs}
            onChange={(e) => update("contextSlugs", [...e.target.selectedOptions].map((o) => o.value))}
            aria-describedby="contexts-error"
          >
            {contexts.data?.map((x) => (
              <option key={x.slug} value={x.slug}>
                {x.slug} — {x.title} ({x.size} chars)
              </option>
            ))}
          </select>
          <FieldErrors id="contexts-error" problems={errorsAt("/contextSlugs")} />
        </div>

        <div>
          <label htmlFor="input" className="block text-sm font-medium">
            Input
          </label>
          <textarea id="input" rows={5} className={field} value={c.input} onChange={(e) => update("input", e.target.value)} aria-describedby="input-error" />
          <FieldErrors id="input-error" problems={errorsAt("/input")} />
        </div>

        <fieldset className="rounded border border-zinc-200 p-3 dark:border-zinc-800">
          <legend className="px-1 text-sm font-medium">Attachments</legend>
          <div
            onDragOver={(e: DragEvent) => e.preventDefault()}
            onDrop={(e: DragEvent) => {
              e.preventDefault();
              void addFiles(e.dataTransfer.files);
            }}
            className="rounded border border-dashed border-zinc-400 p-3 text-sm dark:border-zinc-600"
          >
            <label htmlFor="files" className="mr-2">
              Drop files here or choose:
            </label>
            <input id="files" type="file" multiple onChange={(e) => e.target.files && void addFiles(e.target.files)} className="text-sm" />
          </div>
          <div className="mt-2 flex gap-2">
            <label htmlFor="attachment-url" className="sr-only">
              Attachment URL
            </label>
            <input id="attachment-url" className={field} placeholder="https://… (attachment by URL)" value={attachmentUrl} onChange={(e) => setAttachmentUrl(e.target.value)} />
            <button
              type="button"
              className={button}
              onClick={() => {
                if (!/^https?:\/\//.test(attachmentUrl)) return;
                update("attachments", [...c.attachments, { name: attachmentUrl.split("/").pop() || attachmentUrl, mimeType: "", size: 0, file: attachmentUrl }]);
                setAttachmentUrl("");
              }}
            >
              Add URL
            </button>
          </div>
          {c.attachments.length > 0 ? (
            <ul className="mt-2 flex flex-wrap gap-2" aria-label="Attached files">
              {c.attachments.map((a, i) => (
                <li key={`${a.name}-${i}`} className="flex items-center gap-2 rounded-full bg-zinc-100 px-3 py-1 text-xs dark:bg-zinc-800">
                  <span>
                    {a.name} · {a.mimeType || "type from URL"} · {a.size ? `${a.size} B` : "by URL"}
                  </span>
                  <button type="button" aria-label={`Remove ${a.name}`} onClick={() => update("attachments", c.attachments.filter((_, j) => j !== i))}>
                    ×
                  </button>
                </li>
              ))}
            </ul>
          ) : null}
          <FieldErrors id="attachments-error" problems={errorsAt("/attachments")} />
        </fieldset>

        {isStream ? (
          <div>
            <label htmlFor="thread" className="block text-sm font-medium">
              Thread id (optional)
            </label>
            <div className="flex gap-2">
              <input
                id="thread"
                list="recent-threads"
                className={field}
                value={c.threadId}
                onChange={(e) => update("threadId", e.target.value)}
                placeholder="leave empty for a single run"
              />
              <datalist id="recent-threads">
                {threads.map((t) => (
                  <option key={t} value={t} />
                ))}
              </datalist>
              <button type="button" className={button} onClick={() => update("threadId", `t-${Date.now().toString(36)}`)}>
                New thread
              </button>
            </div>
            <FieldErrors id="thread-error" problems={errorsAt("/threadId")} />
          </div>
        ) : (
          <fieldset className="grid gap-3 rounded border border-zinc-200 p-3 sm:grid-cols-2 dark:border-zinc-800">
            <legend className="px-1 text-sm font-medium">Callback</legend>
            <div>
              <label htmlFor="callback-url" className="block text-sm">
                Callback URL
              </label>
              <input id="callback-url" className={field} value={c.callbackUrl} onChange={(e) => update("callbackUrl", e.target.value)} />
            </div>
            <div>
              <label htmlFor="custom-properties" className="block text-sm">
                Custom properties (JSON)
              </label>
              <input id="custom-properties" className={`${field} font-mono`} value={c.customPropertiesText} onChange={(e) => update("customPropertiesText", e.target.value)} />
            </div>
            <FieldErrors id="callback-error" problems={errorsAt("/callback")} />
          </fieldset>
        )}

        {isObject ? (
          <section aria-label="Schema" className="space-y-2">
            <div className="flex flex-wrap items-center gap-2">
              <h2 className="mr-auto text-sm font-medium">Schema</h2>
              <label htmlFor="template" className="sr-only">
                Start from a template
              </label>
              <select
                id="template"
                className="rounded border border-zinc-400 bg-white px-2 py-1 text-sm dark:border-zinc-600 dark:bg-zinc-900"
                value=""
                onChange={(e) => {
                  const template = SCHEMA_TEMPLATES.find((t) => t.id === e.target.value);
                  if (template) update("schemaText", pretty(template.schema));
                }}
              >
                <option value="">Templates…</option>
                {SCHEMA_TEMPLATES.map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.label}
                  </option>
                ))}
              </select>
              <button type="button" className={button} onClick={() => setShowExample(!showExample)} aria-expanded={showExample}>
                Schema from example
              </button>
            </div>
            {showExample ? (
              <div className="space-y-2">
                <label htmlFor="example" className="block text-sm">
                  Paste a JSON example
                </label>
                <textarea id="example" rows={4} className={`${field} font-mono`} value={exampleText} onChange={(e) => setExampleText(e.target.value)} />
                <button
                  type="button"
                  className={button}
                  onClick={() => {
                    try {
                      update("schemaText", pretty(schemaFromExample(JSON.parse(exampleText))));
                      setShowExample(false);
                      setLocalError(null);
                    } catch (error) {
                      setLocalError({ path: "/example", message: `The example is not valid JSON: ${(error as Error).message}` });
                    }
                  }}
                >
                  Make schema
                </button>
                <FieldErrors id="example-error" problems={errorsAt("/example")} />
              </div>
            ) : null}
            <SchemaEditor value={c.schemaText} onChange={(v) => update("schemaText", v)} problems={[...errorsAt("/schema"), ...outputProblems]} onRun={runNow} dark={dark} />
          </section>
        ) : null}

        <p className="text-sm text-zinc-700 dark:text-zinc-300" aria-label="Pre-flight">
          Estimated input: about {estimate.toLocaleString()} tokens (workflow instructions, contexts, attachments, input{isObject ? ", schema" : ""}).
        </p>

        <div className="flex flex-wrap items-center gap-2">
          <button type="submit" className="rounded bg-blue-700 px-4 py-2 text-sm font-medium text-white disabled:opacity-60" disabled={run.status === "running" || !c.workflowSlug}>
            Run
          </button>
          {run.status === "running" || runB.status === "running" ? (
            <button
              type="button"
              className={button}
              onClick={() => {
                cancel();
                cancelB();
              }}
            >
              Cancel
            </button>
          ) : null}
          <span className="text-xs text-zinc-600 dark:text-zinc-400">Ctrl/⌘+Enter runs · Esc cancels</span>
          <label htmlFor="compare" className="text-sm">
            Compare with
          </label>
          <select id="compare" className="rounded border border-zinc-400 bg-white px-2 py-1 text-sm dark:border-zinc-600 dark:bg-zinc-900" value={compareWith} onChange={(e) => setCompareWith(e.target.value)}>
            <option value="">nothing</option>
            <option value="(same)">the same workflow again</option>
            {workflows.data?.map((w) => (
              <option key={w.slug} value={w.slug}>
                {w.slug}
              </option>
            ))}
          </select>
          <span className="ml-auto flex flex-wrap gap-2">
            <button type="button" className={button} onClick={() => void copy("curl")}>
              {copied === "curl" ? "Copied" : "Copy as curl"}
            </button>
            <button type="button" className={button} onClick={() => void copy("fetch")}>
              {copied === "fetch" ? "Copied" : "Copy as fetch"}
            </button>
            <button type="button" className={button} onClick={() => void copy("link")}>
              {copied === "link" ? "Copied" : "Copy permalink"}
            </button>
          </span>
        </div>
        {history.length > 0 ? (
          <div>
            <label htmlFor="history" className="block text-sm font-medium">
              Recent compositions
            </label>
            <select
              id="history"
              className={field}
              value=""
              onChange={(e) => {
                const restored = history[Number(e.target.value)];
                if (restored) setC(restored);
              }}
            >
              <option value="">Restore…</option>
              {history.map((h, i) => (
                <option key={i} value={i}>
                  {OPERATIONS.find((o) => o.value === h.operation)?.label} · {h.workflowSlug} · {h.input.slice(0, 60)}
                </option>
              ))}
            </select>
          </div>
        ) : null}
      </form>

      <div className="space-y-4">
        <p role="status" aria-live="polite" className="sr-only">
          {status}
        </p>
        {unplaced ? (
          <div role="alert" className="rounded border border-red-300 bg-red-50 p-3 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100">
            <p className="font-semibold">
              {apiError.code}
              {apiError.status ? ` (${apiError.status})` : ""}
            </p>
            <p>{apiError.detail}</p>
            {apiError.errors.length > 0 ? (
              <ul className="mt-1 list-disc pl-5">
                {apiError.errors.map((p, i) => (
                  <li key={i}>
                    <code>{p.path}</code>: {p.message}
                  </li>
                ))}
              </ul>
            ) : null}
          </div>
        ) : apiError ? (
          <p role="alert" className="text-sm text-red-800 dark:text-red-300">
            {apiError.detail}
          </p>
        ) : null}
        {comparing ? (
          <>
            <div className="grid gap-4 xl:grid-cols-2">
              <div className="space-y-4">
                <ResultPanel run={run} schema={safeParse(c.schemaText)} suffix="A" />
                <MetadataPanel run={run} suffix="A" />
              </div>
              <div className="space-y-4">
                <ResultPanel run={runB} schema={safeParse(c.schemaText)} suffix="B" />
                <MetadataPanel run={runB} suffix="B" />
              </div>
            </div>
            <Comparison a={run} b={runB} />
          </>
        ) : (
          <>
            <ResultPanel run={run} schema={safeParse(c.schemaText)} />
            <MetadataPanel run={run} />
          </>
        )}
        {inboxRunId && inbox && client ? <InboxPanel client={client} apiKey={apiKey} inboxId={inbox.id} runId={inboxRunId} /> : null}
      </div>
    </main>
  );
}

function FieldErrors({ id, problems }: { id: string; problems: FieldProblem[] }) {
  if (problems.length === 0) return null;
  return (
    <ul id={id} className="mt-1 text-sm text-red-700 dark:text-red-400">
      {problems.map((p, i) => (
        <li key={i}>{p.message}</li>
      ))}
    </ul>
  );
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
