"use client";

import { roleAtLeast, roleReason, type Role } from "@/lib/domain/roles";
import { useQuery } from "@tanstack/react-query";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { ApiError, type FieldProblem } from "@/lib/client/api";
import {
  CompositionError,
  DEFAULT_CALLBACK_URL,
  parseJsonOrUndefined,
  toPermalinkHash,
  readAttachments,
  toRequestBody,
} from "@/lib/client/composition";
import { queryKeys } from "@/lib/client/query-keys";
import { compositionSnippet, toCurl, toFetch } from "@/lib/client/snippets";
import { SCHEMA_TEMPLATES } from "@/lib/client/templates";
import { useApiKey } from "../key-context";
import { SignIn } from "../sign-in";
import { Disclosure } from "../ui/disclosure";
import { AttachmentsField, isImage } from "./attachments-field";
import { ContextsField, InputField, PreflightEstimate, WorkflowLine } from "./composer-fields";
import { CallbackFields, ThreadField } from "./delivery-fields";
import { LinkNotice } from "./link-notice";
import { ModelBanner, useModel } from "./model-banner";
import { PromptSection } from "./prompt-section";
import { LiveResults, type ComparedColumn } from "./live-results";
import { LiveRunStatusChip } from "./run-status";
import { ThreadTranscript } from "./thread-transcript";
import { Toolbar, type CopyTarget } from "./toolbar";
import { SchemaSection } from "./schema-section";
import { pretty, selectHasInput, useComposition, useCompositionSelector } from "./use-composition";
import { useDraft } from "./use-draft";
import { useInbox } from "./use-inbox";
import { runPhase, useRun, useRunSelector, type RunState } from "./use-run";
import { useShortcuts } from "./use-shortcuts";
import { useStoredList } from "./use-stored-list";
import { COLUMN_NAMES, MAX_VARIANTS, MODEL, SAME, SAVED, variantBody, variantLabel } from "./variants";

/** No problems: one array, so that a memoised section sees the same props. */
const NO_PROBLEMS: FieldProblem[] = [];

export function Playground() {
  const { apiKey, client, signOut } = useApiKey();
  if (apiKey === null) return null; // reading the session
  if (!apiKey || !client) return <SignIn />;
  return <Composer apiKey={apiKey} onUnauthorized={() => void signOut("Your session has ended, or its key was revoked. Sign in again.")} />;
}

/**
 * The playground's layout: a bar always in view (what runs, Run, status, Compare, Code), then the
 * composer and the results as two panes that scroll on their own — on a narrow screen, two tabs
 * that switch to the result on Run. State lives in hooks (composition, runs, inbox, recent
 * threads); each section is its own component. A run's live state is in its store (useRun): only the
 * result pane and the status chip follow it as it streams; this component reads its start and end.
 * The composition is in a store as well (useComposition): this component reads all of it but the
 * input, so a key press in Input re-renders the Input and the estimate, nothing else; Run, ⌘↵ and
 * Code read the whole composition when they act.
 */
function Composer({ apiKey, onUnauthorized }: { apiKey: string; onUnauthorized(): void }) {
  const { client } = useApiKey();
  const workflows = useQuery({ queryKey: queryKeys.workflows(apiKey), queryFn: ({ signal }) => client!.listWorkflows(signal) });
  const contexts = useQuery({ queryKey: queryKeys.contexts(apiKey), queryFn: ({ signal }) => client!.listContexts(signal) });
  // `c` is the composition but its input: typing in Input does not re-render the composer (the
  // Input and the estimate read the input themselves; what acts on it reads `composition.get()`).
  const { store: composition, c, setC, update, history, remember, linkProblems, dismissLinkProblems, linkDraft } = useComposition(workflows.data?.[0]?.slug);
  const hasInput = useCompositionSelector(composition, selectHasInput);
  const [localError, setLocalError] = useState<FieldProblem | null>(null);
  const [copied, setCopied] = useState<CopyTarget | null>(null);
  const store = useRun(client);
  const { start, cancel, reset } = store;
  const run = useRunSelector(store, runPhase);
  // Compare: the same composition run again as up to three variants (another workflow, version or
  // label, the saved version without the draft, another model), side by side.
  const [variants, setVariants] = useState<string[]>([]);
  const b = useRun(client);
  const cRun = useRun(client);
  const d = useRun(client);
  const others = useMemo(() => [b, cRun, d] as const, [b, cRun, d]);
  const phases = [useRunSelector(b, runPhase), useRunSelector(cRun, runPhase), useRunSelector(d, runPhase)];
  const me = useQuery({ queryKey: queryKeys.me(apiKey), queryFn: ({ signal }) => client!.me(signal) });
  // Until /me answers, nothing is refused ahead of the server: a viewer's Run is off once its role is known.
  const role: Role = me.data?.role ?? "editor";
  const mayEdit = roleAtLeast(role, "editor");
  const models = useQuery({ queryKey: queryKeys.models(apiKey), queryFn: ({ signal }) => client!.listModels(signal) });
  const draft = useDraft(client!, apiKey, c.workflowSlug, linkDraft);
  const [presenting, setPresenting] = useState(false);
  // Another workflow or operation: the last results belonged to the previous one, so they go.
  const { reset: resetB } = b;
  const { reset: resetC } = cRun;
  const { reset: resetD } = d;
  useEffect(() => {
    reset();
    resetB();
    resetC();
    resetD();
  }, [c.workflowSlug, c.operation, reset, resetB, resetC, resetD]);
  const [threads, rememberThread] = useStoredList<string>("genserve.threads", 20);
  const inbox = useInbox(client, apiKey, (url) => setC((prev) => (prev.callbackUrl === DEFAULT_CALLBACK_URL ? { ...prev, callbackUrl: url } : prev)));
  // Narrow screens show one pane at a time.
  const [pane, setPane] = useState<"compose" | "result">("compose");
  const [advanced, setAdvanced] = useState(false);

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
  // An output that failed validation names places in the output: the result marks them there; the
  // schema is not wrong for it and is not marked (its own problems are under /schema).
  const problems: FieldProblem[] = [...(apiError && apiError.code !== "output_invalid" ? apiError.errors : []), ...(localError ? [localError] : [])];
  const errorsAt = (prefix: string) => {
    const found = problems.filter((p) => p.path === prefix || p.path.startsWith(`${prefix}/`));
    return found.length > 0 ? found : NO_PROBLEMS;
  };
  // The Advanced section stays open while a field in it has a problem.
  const advancedOpen = advanced || ["/threadId", "/callback"].some((at) => errorsAt(at).length > 0);

  const selectedWorkflow = workflows.data?.find((w) => w.slug === c.workflowSlug.split("@")[0]);
  // While the workflow's model cannot run, or cannot take the attached images, Run is off and says
  // why (a run would only answer 503, or 422).
  const model = useModel(client!, apiKey, selectedWorkflow?.model);
  const runBlocked =
    roleReason(role, "editor", "running a workflow") ??
    (model?.status.state === "unavailable" || model?.status.state === "downloading"
      ? `Model “${model.alias}” is not available`
      : model && !model.vision && c.attachments.some(isImage)
        ? `Model “${model.alias}” does not take images`
        : null);
  const runNow = useCallback(() => {
    if (runBlocked) return;
    setLocalError(null);
    // The composition as it is now (the input included).
    const c = composition.get();
    let body: Record<string, unknown>;
    try {
      body = toRequestBody(c);
    } catch (error) {
      if (error instanceof CompositionError) {
        setLocalError({ path: error.path, message: error.message });
        setPane("compose");
      }
      return;
    }
    // Unsaved edits of the prompt run as a draft (editor and admin keys); the saved version is untouched.
    const drafted = mayEdit ? draft.changed : undefined;
    if (drafted) body.draft = drafted;
    remember(c);
    setPane("result");
    void start(c.operation, body);
    variants.forEach((variant, i) => void others[i]!.start(c.operation, variantBody(variant, body, drafted, c.workflowSlug)));
  }, [composition, remember, start, variants, others, mayEdit, draft.changed, runBlocked]);
  const running = [run, ...phases].some((r) => r.status === "running");
  const cancelAll = useCallback(() => {
    cancel();
    for (const o of others) o.cancel();
  }, [cancel, others]);
  const togglePresenter = useCallback(() => setPresenting((p) => !p), []);
  useShortcuts({ run: runNow, cancel: cancelAll, running, present: togglePresenter });
  // The result pane and the schema editor are memoised: what they are given stays the same while
  // other fields are edited (Run from them runs the composition as it is then).
  const latestRunNow = useRef(runNow);
  latestRunNow.current = runNow;
  const runLatest = useCallback(() => latestRunNow.current(), []);
  const setSchemaText = useCallback((text: string) => update("schemaText", text), [update]);
  const editSchema = useCallback(() => {
    setPane("compose");
    // After the pane is shown: bring the editor into view and put the caret in it.
    requestAnimationFrame(() => {
      const section = document.getElementById("schema-section");
      section?.scrollIntoView({ block: "start", behavior: "smooth" });
      section?.querySelector<HTMLTextAreaElement>(".monaco-editor textarea")?.focus();
    });
  }, []);

  const copy = async (what: CopyTarget) => {
    // The composition as it is now (the input included).
    const c = composition.get();
    const plain = compositionSnippet(c, window.location.origin);
    // The code runs what Run runs: with the unsaved draft, when there is one.
    const snippet = mayEdit && draft.changed ? { ...plain, body: { ...(plain.body as Record<string, unknown>), draft: draft.changed } } : plain;
    // The permalink carries the unsaved prompt too, so whoever opens it continues from the draft.
    const hash = toPermalinkHash(c, mayEdit ? draft.changed : undefined);
    const text = what === "curl" ? toCurl(snippet) : what === "fetch" ? toFetch(snippet) : `${window.location.origin}/${hash}`;
    if (what === "link") window.history.replaceState(null, "", hash);
    await navigator.clipboard.writeText(text);
    setCopied(what);
    setTimeout(() => setCopied(null), 2000);
  };

  // The schema follows the workflow (its example's schema, else the first template) until the user
  // edits it: the text last set this way tells an untouched schema from an edited one.
  const followedSchema = useRef(c.schemaText);
  // The selected version's own default schema (`slug@4` from "Try this version" too), else its example's.
  const exampleSchema = draft.definition?.schema ?? draft.definition?.example?.schema ?? (draft.definition ? undefined : selectedWorkflow?.example?.schema);
  useEffect(() => {
    if (!workflows.data || c.schemaText !== followedSchema.current) return;
    const wanted = pretty(exampleSchema ?? SCHEMA_TEMPLATES[0]!.schema);
    followedSchema.current = wanted;
    if (wanted !== c.schemaText) update("schemaText", wanted);
    // Only a change of workflow moves the schema; typing never does.
  }, [workflows.data, exampleSchema, draft.definition]);
  const inboxRunId = run.status === "done" && run.operation !== "stream-object" && inbox && c.callbackUrl === inbox.url ? run.runId : null;
  const inboxId = inbox?.id;
  const resultInbox = useMemo(() => (inboxRunId && inboxId && client ? { client, apiKey, inboxId, runId: inboxRunId } : null), [inboxRunId, inboxId, client, apiKey]);
  const describe = useCallback(
    (r: RunState) => {
      const model = r.metadata ? `${r.metadata.model.name || r.metadata.model.tag} (${r.metadata.model.tag})` : workflows.data?.find((w) => w.slug === r.workflowSlug?.split("@")[0])?.model;
      return [r.workflowSlug, model].filter(Boolean).join(" · ");
    },
    [workflows.data],
  );
  const advancedSummary = [
    isStream ? (c.threadId ? `thread ${c.threadId}` : "no thread") : inbox && c.callbackUrl === inbox.url ? "callback to the built-in inbox" : c.callbackUrl ? "callback to your URL" : "no callback",
  ]
    .filter(Boolean)
    .join(" · ");
  const lastThreadRun = isStream && run.status !== "running" ? run.runId : null;
  // The variants that have run (a new list only when one starts or is reset, or the variants change).
  const [idleB, idleC, idleD] = phases.map((p) => p.status === "idle");
  const comparedColumns = useMemo<ComparedColumn[]>(() => {
    const idle = [idleB, idleC, idleD];
    return variants.flatMap((v, i) => (idle[i] ? [] : [{ index: i, name: COLUMN_NAMES[i + 1]!, label: variantLabel(v, c.workflowSlug) }]));
  }, [variants, c.workflowSlug, idleB, idleC, idleD]);
  const comparing = comparedColumns.length > 0;
  // Three or four columns: the composer steps aside on wide screens until asked back (Results' toggle).
  const [composerShown, setComposerShown] = useState(false);
  const aside = comparedColumns.length >= 2 && !composerShown;
  const toggleComposer = useCallback(() => setComposerShown((shown) => !shown), []);
  const composerToggle = useMemo(() => (comparedColumns.length >= 2 && !presenting ? { shown: composerShown, toggle: toggleComposer } : null), [comparedColumns.length, presenting, composerShown, toggleComposer]);
  const currentSlug = c.workflowSlug.split("@")[0]!;
  const versions = useQuery({
    queryKey: queryKeys.workflowVersions(apiKey, currentSlug),
    queryFn: ({ signal }) => client!.workflowVersions(currentSlug, signal),
    enabled: currentSlug !== "" && selectedWorkflow?.source === "api",
  });
  const variantOptions = [
    { value: SAME, label: "the same workflow again" },
    ...(draft.changed ? [{ value: SAVED, label: "the saved version (no draft)" }] : []),
    ...(versions.data?.versions ?? []).filter((v) => !v.deleted).map((v) => ({ value: `${currentSlug}@${v.version}`, label: `${currentSlug}@${v.version}${v.labels.length ? ` (${v.labels.join(", ")})` : ""}` })),
    ...(mayEdit ? (models.data ?? []).filter((m) => m.alias !== draft.current?.model).map((m) => ({ value: `${MODEL}${m.alias}`, label: `this prompt on ${m.alias}` })) : []),
  ];

  return (
    // The workspace fills the window under the navigation on wide screens (globals.css), so each pane scrolls on its own.
    <main data-workspace data-presenter={presenting || undefined} className={`mx-auto flex w-full flex-col lg:min-h-0 lg:flex-1 ${presenting ? "" : "max-w-[1600px]"}`}>
      <h1 className="sr-only">Playground</h1>
      <Toolbar
        c={c}
        update={update}
        workflows={workflows.data}
        canRun={run.status !== "running" && Boolean(c.workflowSlug) && hasInput && !runBlocked}
        runBlocked={runBlocked}
        running={running}
        onCancel={cancelAll}
        status={<LiveRunStatusChip store={store} compact />}
        variants={variants}
        onVariants={setVariants}
        variantOptions={variantOptions}
        maxVariants={MAX_VARIANTS}
        presenting={presenting}
        onPresent={togglePresenter}
        copied={copied}
        onCopy={(what) => void copy(what)}
      />
      <div role="tablist" aria-label="Playground panes" className="flex border-b border-zinc-200 px-4 lg:hidden dark:border-zinc-800">
        {(["compose", "result"] as const).map((p) => (
          <button
            key={p}
            type="button"
            role="tab"
            id={`pane-tab-${p}`}
            aria-controls={p === "compose" ? "composition" : "pane-result"}
            aria-selected={pane === p}
            onClick={() => setPane(p)}
            className={`-mb-px border-b-2 px-4 py-2 text-sm font-medium ${pane === p ? "border-blue-700 text-zinc-950 dark:border-blue-400 dark:text-white" : "border-transparent text-zinc-700 dark:text-zinc-300"}`}
          >
            {p === "compose" ? "Compose" : "Result"}
          </button>
        ))}
      </div>
      <div
        className={`grid grid-cols-[minmax(0,1fr)] lg:min-h-0 lg:flex-1 ${presenting || aside ? "" : comparing ? "lg:grid-cols-[minmax(0,2fr)_minmax(0,3fr)]" : "lg:grid-cols-[minmax(0,1fr)_minmax(0,1fr)]"}`}
      >
        <form
          id="composition"
          aria-label="Compose a run"
          className={`space-y-4 px-4 py-4 lg:overflow-y-auto lg:border-r lg:border-zinc-200 lg:dark:border-zinc-800 ${presenting ? "hidden" : pane === "compose" ? (aside ? "lg:hidden" : "") : aside ? "hidden" : "hidden lg:block"}`}
          onSubmit={(e) => {
            e.preventDefault();
            runNow();
          }}
          onDragOver={(e) => {
            if (e.dataTransfer.types.includes("Files")) e.preventDefault();
          }}
          onDrop={(e) => {
            if (e.dataTransfer.files.length === 0) return;
            e.preventDefault();
            const files = e.dataTransfer.files;
            void readAttachments(files).then((added) => setC((prev) => ({ ...prev, attachments: [...prev.attachments, ...added] })));
          }}
        >
          <LinkNotice problems={linkProblems} onDismiss={dismissLinkProblems} />
          {client && selectedWorkflow ? <ModelBanner client={client} apiKey={apiKey} alias={selectedWorkflow.model} /> : null}
          <WorkflowLine c={c} workflows={workflows.data} loading={workflows.isLoading} errorsAt={errorsAt} history={history} onRestore={setC} />
          <ContextsField c={c} update={update} contexts={contexts.data} errorsAt={errorsAt} fromWorkflow={selectedWorkflow?.contexts} />
          {isStream && c.threadId && client ? <ThreadTranscript client={client} apiKey={apiKey} threadId={c.threadId} after={lastThreadRun} /> : null}
          {draft.definition || draft.loading ? (
            <PromptSection draft={draft} models={models.data} contexts={contexts.data} role={role} onRun={runLatest} problems={errorsAt("/draft")} />
          ) : null}
          <InputField store={composition} schemaText={c.schemaText} problems={errorsAt("/input")} example={selectedWorkflow?.example} withSchema={isObject} />
          <AttachmentsField attachments={c.attachments} onChange={(next) => update("attachments", next)} problems={errorsAt("/attachments")} model={model} />
          <PreflightEstimate store={composition} workflow={selectedWorkflow} contexts={contexts.data} withSchema={isObject} />
          {isObject ? <SchemaSection schemaText={c.schemaText} workflowSlug={c.workflowSlug} onChange={setSchemaText} problems={errorsAt("/schema")} onRun={runLatest} /> : null}
          <Disclosure title="Advanced" summary={advancedSummary} open={advancedOpen} onToggle={setAdvanced}>
            {isStream ? <ThreadField c={c} update={update} recent={threads} problems={errorsAt("/threadId")} /> : <CallbackFields c={c} update={update} problems={errorsAt("/callback")} />}
          </Disclosure>
        </form>
        <div id="pane-result" aria-labelledby="pane-tab-result" className={`min-w-0 px-4 py-4 lg:overflow-y-auto ${presenting ? "text-lg" : pane === "result" ? "" : "hidden lg:block"}`}>
          <LiveResults
            store={store}
            others={others}
            columns={comparedColumns}
            comparing={comparing}
            composer={composerToggle}
            schema={schema}
            describe={describe}
            onRetry={runLatest}
            onEditSchema={editSchema}
            client={client}
            apiKey={apiKey}
            inbox={resultInbox}
          />
        </div>
      </div>
    </main>
  );
}
