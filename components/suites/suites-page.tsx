"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { ApiError, type ApiClient, type FieldProblem } from "@/lib/client/api";
import { queryKeys } from "@/lib/client/query-keys";
import { RequireKey } from "../require-key";
import { useTheme } from "../theme";
import { TableHead } from "../ui/table-head";
import { Badge } from "../ui/badge";
import { Button } from "../ui/button";
import { Field, Select, TextInput } from "../ui/field";
import { ErrorAlert } from "../ui/panel";
import { EvaluationComparison, EvaluationView } from "./evaluation-view";
import { SuiteEditor } from "./suite-editor";
import { SuiteTable } from "./suite-table";
import { asSuiteDoc, type SuiteDoc } from "./suite-table-model";
import { Page } from "../ui/page";
import { ScrollTable } from "../ui/scroll-table";

export function SuitesPage() {
  return <RequireKey>{(client, apiKey) => <Suites client={client} apiKey={apiKey} />}</RequireKey>;
}

const NEW_SUITE = {
  workflow: "",
  cases: [{ name: "first case", input: "", expect: { "/field": { equals: "value" } } }],
};

/** Test suites: the list, a suite's document in Monaco, and its evaluations — run, followed live, compared. */
function Suites({ client, apiKey }: { client: ApiClient; apiKey: string }) {
  const suites = useQuery({ queryKey: queryKeys.suites(apiKey), queryFn: ({ signal }) => client.listSuites(signal) });
  const [selected, setSelected] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  // Table or JSON, kept from suite to suite (and across a save, which opens the saved suite).
  const [view, setView] = useState<EditorView>("text");
  // A suite to open from the address (?suite=slug), e.g. after "Save as test case"; or an evaluation
  // (?evaluation=id, from a workflow's label history), shown on its suite's page.
  useEffect(() => {
    const query = new URLSearchParams(window.location.search);
    const slug = query.get("suite");
    const evaluation = query.get("evaluation");
    if (slug) setSelected(slug);
    else if (evaluation) void client.getEvaluation(evaluation).then((report) => setSelected(report.suite), () => undefined);
  }, [client]);
  const open = (slug: string) => {
    setCreating(false);
    setSelected(slug);
  };
  return (
    <Page width="full">
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="text-2xl font-semibold">Test suites</h1>
        <Button
          variant="primary"
          onClick={() => {
            setSelected(null);
            setCreating(true);
          }}
        >
          New suite
        </Button>
      </div>
      <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">
        Cases with expectations on fields of the output, run as one evaluation against a workflow; the same document works as a YAML file with <code>genserve eval</code>.
      </p>
      {suites.error ? <ErrorAlert>{(suites.error as Error).message}</ErrorAlert> : null}
      <div className="mt-4 grid gap-6 lg:grid-cols-[minmax(0,22rem)_minmax(0,1fr)]">
        <ScrollTable className="h-fit w-full text-left text-sm" aria-label="Suites">
          <TableHead columns={["Suite", "Cases", "Workflow", "Version"]} />
          <tbody>
            {(suites.data ?? []).map((s) => (
              <tr key={s.slug} className={`border-b border-zinc-100 dark:border-zinc-800 ${selected === s.slug ? "bg-blue-50 dark:bg-blue-950" : ""}`}>
                <td className="py-1 pr-3">
                  <button type="button" className="text-left underline-offset-2 hover:underline" onClick={() => open(s.slug)} aria-current={selected === s.slug ? "true" : undefined}>
                    {s.slug}
                  </button>
                </td>
                <td className="py-1 pr-3">{s.cases}</td>
                <td className="py-1 pr-3">{s.workflow ?? "–"}</td>
                <td className="py-1 pr-3">v{s.version}</td>
              </tr>
            ))}
            {suites.data?.length === 0 ? (
              <tr>
                <td colSpan={4} className="py-2 text-zinc-600 dark:text-zinc-400">
                  No suites yet. Create one, or save a run as a test case from its page.
                </td>
              </tr>
            ) : null}
          </tbody>
        </ScrollTable>
        <div className="min-w-0">
          {creating ? <SuiteDetail key="new" client={client} apiKey={apiKey} slug={null} onSaved={open} view={view} onView={setView} /> : null}
          {selected && !creating ? <SuiteDetail key={selected} client={client} apiKey={apiKey} slug={selected} onSaved={open} view={view} onView={setView} /> : null}
        </div>
      </div>
    </Page>
  );
}

type EditorView = "table" | "text";

function SuiteDetail(props: { client: ApiClient; apiKey: string; slug: string | null; onSaved(slug: string): void; view: EditorView; onView(view: EditorView): void }) {
  const { client, apiKey, slug, onSaved, view, onView: setView } = props;
  const queryClient = useQueryClient();
  const { dark } = useTheme();
  const suite = useQuery({ queryKey: queryKeys.suite(apiKey, slug ?? ""), queryFn: ({ signal }) => client.getSuite(slug!, signal), enabled: slug !== null });
  const [name, setName] = useState(slug ?? "");
  const [text, setText] = useState<string | null>(slug === null ? JSON.stringify(NEW_SUITE, null, 2) : null);
  const [problems, setProblems] = useState<FieldProblem[]>([]);
  const [error, setError] = useState<string | null>(null);
  // Table or text: both edit the same document (the text); the table reads it parsed and writes it back.
  const [viewError, setViewError] = useState<string | null>(null);
  const parsed = text === null ? null : asSuiteDoc(text);
  const showTable = () => {
    if (parsed && !parsed.ok) return setViewError(parsed.reason);
    setViewError(null);
    setView("table");
  };
  const editTable = (doc: SuiteDoc) => setText(JSON.stringify(doc, null, 2));
  const shown: EditorView = view === "table" && parsed?.ok ? "table" : "text";
  useEffect(() => {
    if (suite.data && text === null) {
      const { suite: _slug, ...document } = suite.data.document;
      setText(JSON.stringify(document, null, 2));
    }
  }, [suite.data, text]);

  const save = useMutation({
    mutationFn: async () => {
      let document: unknown;
      try {
        document = JSON.parse(text ?? "");
      } catch (e) {
        throw new ApiError(400, "validation_failed", `The suite is not JSON: ${(e as Error).message}`);
      }
      return client.putSuite(name, document);
    },
    onMutate: () => {
      setProblems([]);
      setError(null);
    },
    onSuccess: async (saved) => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.suites(apiKey) });
      queryClient.setQueryData(queryKeys.suite(apiKey, saved.slug), saved);
      onSaved(saved.slug);
    },
    onError: (e) => {
      if (e instanceof ApiError) {
        setProblems(e.errors);
        setError(e.detail);
      } else setError((e as Error).message);
    },
  });

  if (slug !== null && suite.isLoading) return <p>Loading…</p>;
  if (slug !== null && suite.data === null) return <ErrorAlert>No suite “{slug}” exists for this key.</ErrorAlert>;
  return (
    <div className="space-y-4">
      {/* The team's page: the latest results first, the document to edit under them. */}
      {slug !== null && suite.data ? (
        <Evaluations client={client} apiKey={apiKey} slug={slug} defaultWorkflow={suite.data.document.workflow ?? ""} suiteRepeat={suite.data.document.repeat ?? 1} />
      ) : null}
      <section aria-label="Suite document" className="space-y-2">
        <div className="flex flex-wrap items-end gap-3">
          {slug === null ? (
            <Field id="suite-slug" label="Slug">
              <TextInput id="suite-slug" value={name} onChange={(e) => setName(e.target.value)} placeholder="invoice-extraction" />
            </Field>
          ) : (
            <h2 className="text-lg font-semibold">
              {slug} <span className="text-sm font-normal text-zinc-600 dark:text-zinc-400">v{suite.data?.version}</span>
            </h2>
          )}
          <Button variant="primary" onClick={() => save.mutate()} disabled={save.isPending || !name || text === null}>
            Save
          </Button>
        </div>
        {error ? (
          <p role="alert" className="text-sm text-red-700 dark:text-red-400">
            {error}
          </p>
        ) : null}
        <div role="group" aria-label="Edit the suite as" className="inline-flex overflow-hidden rounded border border-zinc-400 text-sm dark:border-zinc-600">
          {(
            [
              ["table", "Table", showTable],
              ["text", "JSON", () => (setViewError(null), setView("text"))],
            ] as const
          ).map(([key, label, choose]) => (
            <button
              key={key}
              type="button"
              aria-pressed={shown === key}
              onClick={choose}
              className={`px-3 py-1 ${shown === key ? "bg-blue-700 font-medium text-white" : "hover:bg-zinc-100 dark:hover:bg-zinc-800"}`}
            >
              {label}
            </button>
          ))}
        </div>
        {viewError ? (
          <p role="alert" className="text-sm text-red-700 dark:text-red-400">
            The table cannot show this document: {viewError}
          </p>
        ) : null}
        {text !== null && shown === "table" && parsed?.ok ? <SuiteTable doc={parsed.doc} onChange={editTable} problems={problems} /> : null}
        {text !== null && shown === "text" ? <SuiteEditor value={text} onChange={setText} problems={problems} onSave={() => save.mutate()} dark={dark} /> : null}
      </section>
    </div>
  );
}

function Evaluations({ client, apiKey, slug, defaultWorkflow, suiteRepeat }: { client: ApiClient; apiKey: string; slug: string; defaultWorkflow: string; suiteRepeat: number }) {
  const queryClient = useQueryClient();
  const workflows = useQuery({ queryKey: queryKeys.workflows(apiKey), queryFn: ({ signal }) => client.listWorkflows(signal) });
  const list = useQuery({ queryKey: queryKeys.evaluations(apiKey, slug), queryFn: ({ signal }) => client.listEvaluations(slug, signal), refetchInterval: 5_000 });
  const [workflow, setWorkflow] = useState(defaultWorkflow);
  // Empty: the suite's own `repeat` (the form used to send 1, silently overriding a suite's 2).
  const [repeat, setRepeat] = useState("");
  const [withBaseline, setWithBaseline] = useState(true);
  const [shown, setShown] = useState<string | null>(() => (typeof window === "undefined" ? null : new URLSearchParams(window.location.search).get("evaluation")));
  const [compareWith, setCompareWith] = useState<string>("");
  const [error, setError] = useState<string | null>(null);
  const current = shown ?? list.data?.[0]?.id ?? null;

  const report = useQuery({
    queryKey: queryKeys.evaluation(apiKey, current ?? ""),
    queryFn: ({ signal }) => client.getEvaluation(current!, signal),
    enabled: current !== null,
    // Live while it runs: the matrix fills in as results are recorded.
    refetchInterval: (query) => (query.state.data && !["queued", "running"].includes(query.state.data.status) ? false : 700),
  });
  const other = useQuery({ queryKey: queryKeys.evaluation(apiKey, compareWith), queryFn: ({ signal }) => client.getEvaluation(compareWith, signal), enabled: compareWith !== "" });

  const start = useMutation({
    mutationFn: () =>
      client.startEvaluation(slug, {
        ...(workflow && workflow !== defaultWorkflow ? { workflowSlug: workflow } : {}),
        ...(repeat.trim() !== "" ? { repeat: Number(repeat) } : {}),
        // "latest" with no completed evaluation yet is simply no baseline.
        ...(withBaseline ? { baseline: "latest" } : {}),
      }),
    onMutate: () => setError(null),
    onSuccess: async ({ id }) => {
      setShown(id);
      await queryClient.invalidateQueries({ queryKey: queryKeys.evaluations(apiKey, slug) });
    },
    onError: (e) => setError(e instanceof ApiError ? [e.detail, ...e.errors.map((p) => `${p.path}: ${p.message}`)].join(" · ") : (e as Error).message),
  });
  const cancel = useMutation({
    mutationFn: (id: string) => client.cancelEvaluation(id),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.evaluation(apiKey, current ?? "") });
      await queryClient.invalidateQueries({ queryKey: queryKeys.evaluations(apiKey, slug) });
    },
  });

  return (
    <section aria-label="Evaluations" className="space-y-3">
      <h2 className="text-lg font-semibold">Evaluations</h2>
      <div className="flex flex-wrap items-end gap-3">
        <Field id="eval-workflow" label="Workflow">
          <Select id="eval-workflow" value={workflow} onChange={(e) => setWorkflow(e.target.value)}>
            <option value="">(the suite&apos;s)</option>
            {(workflows.data ?? []).map((w) => (
              <option key={w.slug} value={w.slug}>
                {w.slug}
              </option>
            ))}
          </Select>
        </Field>
        <Field id="eval-repeat" label="Repeat" help={`empty: the suite's (${suiteRepeat})`}>
          <TextInput id="eval-repeat" type="number" min={1} max={20} value={repeat} placeholder={String(suiteRepeat)} aria-describedby="eval-repeat-help" onChange={(e) => setRepeat(e.target.value)} className="w-20" />
        </Field>
        <label className="flex items-center gap-1 text-sm">
          <input type="checkbox" checked={withBaseline} onChange={(e) => setWithBaseline(e.target.checked)} /> Compare with the latest
        </label>
        <Button variant="primary" onClick={() => start.mutate()} disabled={start.isPending}>
          Run suite
        </Button>
      </div>
      {error ? <ErrorAlert>{error}</ErrorAlert> : null}
      {report.data ? <EvaluationView report={report.data} onCancel={() => cancel.mutate(report.data!.id)} /> : null}
      {(list.data ?? []).length > 1 ? (
        <div className="flex flex-wrap items-end gap-3">
          <Field id="eval-shown" label="Show evaluation">
            <Select id="eval-shown" value={current ?? ""} onChange={(e) => setShown(e.target.value)}>
              {(list.data ?? []).map((e) => (
                <option key={e.id} value={e.id}>
                  {e.createdAt.replace("T", " ").slice(0, 19)} · {e.target.workflowSlug} · {e.status} · {e.totals.passRate === null ? "–" : `${Math.round(e.totals.passRate * 100)}%`}
                </option>
              ))}
            </Select>
          </Field>
          <Field id="eval-compare" label="Side by side with">
            <Select id="eval-compare" value={compareWith} onChange={(e) => setCompareWith(e.target.value)}>
              <option value="">(none)</option>
              {(list.data ?? [])
                .filter((e) => e.id !== current)
                .map((e) => (
                  <option key={e.id} value={e.id}>
                    {e.createdAt.replace("T", " ").slice(0, 19)} · {e.target.workflowSlug}
                    {e.target.model ? ` · ${e.target.model}` : ""} · {e.status}
                  </option>
                ))}
            </Select>
          </Field>
        </div>
      ) : null}
      {report.data && other.data ? <EvaluationComparison a={report.data} b={other.data} /> : null}
      {list.data?.length === 0 ? (
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          Not run yet. <Badge>Run suite</Badge> runs every case through the workflow and checks each field.
        </p>
      ) : null}
    </section>
  );
}
