"use client";

import { DiffEditor } from "@monaco-editor/react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useState } from "react";
import type { ApiClient, WorkflowDiff, WorkflowLabels, WorkflowVersions } from "@/lib/client/api";
import { queryKeys } from "@/lib/client/query-keys";
import { loadMonaco } from "../playground/monaco/load-monaco";
import { RequireKey } from "../require-key";
import { useTheme } from "../theme";
import { Badge } from "../ui/badge";
import { Button } from "../ui/button";
import { Field, Select, TextInput } from "../ui/field";
import { ErrorAlert, Panel } from "../ui/panel";
import { TableHead } from "../ui/table-head";
import { Page } from "../ui/page";
import { ScrollTable } from "../ui/scroll-table";

export function WorkflowDetailPage({ slug }: { slug: string }) {
  return <RequireKey>{(client, apiKey) => <WorkflowDetail client={client} apiKey={apiKey} slug={slug} />}</RequireKey>;
}

/** A workflow's versions with their labels, the diff of any two, and (editor and admin keys) promotion and rollback. */
function WorkflowDetail({ client, apiKey, slug }: { client: ApiClient; apiKey: string; slug: string }) {
  const versions = useQuery({ queryKey: queryKeys.workflowVersions(apiKey, slug), queryFn: ({ signal }) => client.workflowVersions(slug, signal) });
  const labels = useQuery({ queryKey: queryKeys.workflowLabels(apiKey, slug), queryFn: ({ signal }) => client.workflowLabels(slug, signal), refetchInterval: 2_000 });
  const me = useQuery({ queryKey: queryKeys.me(apiKey), queryFn: ({ signal }) => client.me(signal) }).data;
  const admin = me?.admin ?? false;
  // Editors promote and roll back (the production label: admins; the server refuses an editor's move of it and says so).
  const mayMove = me?.role === "editor" || admin;
  // Keys by name in the label history: every key's for an admin, else this key's own.
  const keys = useQuery({ queryKey: queryKeys.keys(apiKey), queryFn: ({ signal }) => client.listKeys(signal), enabled: admin });
  const keyNames = new Map<string, string>([...(me ? [[me.keyId, me.name] as const] : []), ...(keys.data ?? []).map((k) => [k.id, k.name] as const)]);
  const live = versions.data?.versions.filter((v) => !v.deleted) ?? [];
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  useEffect(() => {
    if (live.length === 0 || to) return;
    setTo(live.at(-1)!.version);
    setFrom((live.at(-2) ?? live.at(-1)!).version);
  }, [live, to]);

  if (versions.error) return <Page width="wide"><h1 className="text-2xl font-semibold">{slug}</h1><ErrorAlert>{(versions.error as Error).message}</ErrorAlert></Page>;
  return (
    <Page width="wide">
      <p className="text-sm">
        <Link href="/workflows" className="underline">
          Workflows
        </Link>
      </p>
      <div className="mt-1 flex flex-wrap items-center gap-2">
        <h1 className="mr-2 text-2xl font-semibold">{slug}</h1>
        {labels.data?.labels.map((l) => (
          <Badge key={l.label} tone={l.label === "production" ? "success" : "info"}>
            {l.label} → {l.version}
          </Badge>
        ))}
      </div>
      <Versions slug={slug} versions={versions.data} labels={labels.data} />
      {live.length > 0 && (
        <Panel className="mt-6">
          <div className="flex flex-wrap items-end gap-3">
            <h2 className="mr-auto text-lg font-semibold">Compare versions</h2>
            <VersionSelect id="diff-from" label="From" value={from} onChange={setFrom} versions={live} labels={labels.data} />
            <VersionSelect id="diff-to" label="To" value={to} onChange={setTo} versions={live} labels={labels.data} />
          </div>
          {from && to ? <Diff client={client} apiKey={apiKey} slug={slug} from={from} to={to} /> : null}
        </Panel>
      )}
      {mayMove && live.length > 0 ? <Promote client={client} apiKey={apiKey} slug={slug} versions={live} labels={labels.data} /> : null}
      {labels.data && labels.data.history.length > 0 ? <History labels={labels.data} keyNames={keyNames} /> : null}
    </Page>
  );
}

function Versions({ slug, versions, labels }: { slug: string; versions: WorkflowVersions | undefined; labels: WorkflowLabels | undefined }) {
  return (
    <ScrollTable className="mt-4 w-full text-left text-sm">
      <TableHead columns={["Version", "Labels", "Model", "Default schema", "Saved", ""]} />
      <tbody>
        {versions?.versions.map((v) => (
          <tr key={v.version} className="border-b border-zinc-100 dark:border-zinc-900">
            <td className="py-1.5 pr-3 font-mono">{v.version}</td>
            <td className="pr-3">{labels?.labels.filter((l) => l.version === v.version).map((l) => l.label).join(", ") || "—"}</td>
            <td className="pr-3">{v.deleted ? "deleted" : v.model}</td>
            <td className="pr-3">{v.hasSchema ? "yes" : "—"}</td>
            <td className="pr-3">{v.createdAt ? new Date(v.createdAt).toLocaleString() : "genserve.yaml"}</td>
            <td className="py-1">
              {!v.deleted && (
                <Link className="underline" href={`/?try=${encodeURIComponent(`${slug}@${v.version}`)}`}>
                  Try this version
                </Link>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </ScrollTable>
  );
}

function VersionSelect({ id, label, value, onChange, versions, labels }: { id: string; label: string; value: string; onChange(v: string): void; versions: WorkflowVersions["versions"]; labels: WorkflowLabels | undefined }) {
  return (
    <div className="w-40">
      <Field id={id} label={label}>
        <Select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
          {versions.map((v) => {
            const named = labels?.labels.filter((l) => l.version === v.version).map((l) => l.label) ?? [];
            return (
              <option key={v.version} value={v.version}>
                {v.version}
                {named.length ? ` (${named.join(", ")})` : ""}
              </option>
            );
          })}
        </Select>
      </Field>
    </div>
  );
}

function Diff({ client, apiKey, slug, from, to }: { client: ApiClient; apiKey: string; slug: string; from: string; to: string }) {
  const diff = useQuery({ queryKey: queryKeys.workflowDiff(apiKey, slug, from, to), queryFn: ({ signal }) => client.diffWorkflow(slug, from, to, signal) });
  if (diff.error) return <ErrorAlert>{(diff.error as Error).message}</ErrorAlert>;
  if (!diff.data) return <p className="mt-3 text-sm">Loading…</p>;
  const d = diff.data;
  return (
    <div className="mt-4 space-y-4" data-testid="workflow-diff">
      <p className="text-sm">
        {d.schema.breaking ? <Badge tone="danger">Breaking for callers</Badge> : <Badge tone="success">No breaking schema change</Badge>}{" "}
        {d.parameters.length === 0 && d.instructions.hunks.length === 0 && d.schema.changes.length === 0 && d.contexts.added.length + d.contexts.removed.length + d.contexts.repinned.length === 0 ? "The two versions are the same." : null}
      </p>
      {d.parameters.length > 0 && (
        <ul className="text-sm" aria-label="Parameters changed">
          {d.parameters.map((p) => (
            <li key={p.name}>
              <span className="font-mono">{p.name}</span>: {JSON.stringify(p.from)} → {JSON.stringify(p.to)}
            </li>
          ))}
        </ul>
      )}
      {d.contexts.added.length + d.contexts.removed.length + d.contexts.repinned.length > 0 && (
        <p className="text-sm">
          Contexts: {d.contexts.added.map((c) => `+${c}`).join(", ")} {d.contexts.removed.map((c) => `−${c}`).join(", ")}{" "}
          {d.contexts.repinned.map((c) => `${c.slug} ${c.from} → ${c.to}`).join(", ")}
        </p>
      )}
      <h3 className="font-medium">Instructions</h3>
      <SideBySide original={d.before.instructions} modified={d.after.instructions} language="markdown" label="Instructions diff" />
      <h3 className="font-medium">Default schema</h3>
      {d.schema.changes.length > 0 && (
        <ul className="text-sm" aria-label="Schema changes">
          {d.schema.changes.map((c, i) => (
            <li key={i} className="flex flex-wrap items-center gap-2">
              <Badge tone={c.breaking ? "danger" : "neutral"}>{c.breaking ? "breaking" : "compatible"}</Badge>
              <span className="font-mono">{c.path}</span> {c.change}
            </li>
          ))}
        </ul>
      )}
      <SideBySide original={d.before.schema === null ? "" : JSON.stringify(d.before.schema, null, 2)} modified={d.after.schema === null ? "" : JSON.stringify(d.after.schema, null, 2)} language="json" label="Schema diff" />
    </div>
  );
}

/** Monaco's diff editor, read-only, loaded from the package (never a CDN). */
function SideBySide({ original, modified, language, label }: { original: string; modified: string; language: string; label: string }) {
  const { dark } = useTheme();
  const [ready, setReady] = useState(false);
  useEffect(() => {
    let live = true;
    void loadMonaco().then(() => live && setReady(true));
    return () => void (live = false);
  }, []);
  if (!ready) return <div className="h-48" />;
  return (
    <div className="h-64 overflow-hidden rounded border border-zinc-300 dark:border-zinc-700" role="group" aria-label={label}>
      <DiffEditor original={original} modified={modified} language={language} theme={dark ? "vs-dark" : "light"} options={{ readOnly: true, renderSideBySide: true, minimap: { enabled: false }, fontSize: 14, scrollBeyondLastLine: false, wordWrap: "on" }} />
    </div>
  );
}

/** Promote a version to a label (optionally gated by a suite), or roll a label back to where it pointed before. */
function Promote({ client, apiKey, slug, versions, labels }: { client: ApiClient; apiKey: string; slug: string; versions: WorkflowVersions["versions"]; labels: WorkflowLabels | undefined }) {
  const queryClient = useQueryClient();
  const [version, setVersion] = useState(versions.at(-1)!.version);
  const [label, setLabel] = useState("production");
  const [suite, setSuite] = useState("");
  const [minPass, setMinPass] = useState("1");
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const current = labels?.labels.find((l) => l.label === label);
  const previous = labels?.history.find((m) => m.label === label && m.outcome === "moved" && m.version === current?.version)?.previous ?? null;
  const refresh = () => queryClient.invalidateQueries({ queryKey: queryKeys.workflowLabels(apiKey, slug) });
  const act = async (body: { version: string; requireSuite?: string; minPass?: number }) => {
    setError(null);
    try {
      const answer = await client.promote(slug, label, body);
      setMessage(answer.status === "pending" ? `Evaluating suite "${body.requireSuite}" against version ${body.version}: the label moves if it passes (evaluation ${answer.evaluationId}).` : `${label} now points at version ${body.version}.`);
      await refresh();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <Panel className="mt-6">
      <h2 className="text-lg font-semibold">Promote</h2>
      <div className="mt-2 grid gap-3 sm:grid-cols-4">
        <Field id="promote-version" label="Version">
          <Select id="promote-version" value={version} onChange={(e) => setVersion(e.target.value)}>
            {versions.map((v) => (
              <option key={v.version} value={v.version}>
                {v.version}
              </option>
            ))}
          </Select>
        </Field>
        <Field id="promote-label" label="Label">
          <TextInput id="promote-label" value={label} onChange={(e) => setLabel(e.target.value)} />
        </Field>
        <Field id="promote-suite" label="Require suite (optional)">
          <TextInput id="promote-suite" value={suite} onChange={(e) => setSuite(e.target.value)} placeholder="invoice-extraction" />
        </Field>
        <Field id="promote-min" label="Minimum pass rate">
          <TextInput id="promote-min" type="number" min={0} max={1} step={0.05} value={minPass} onChange={(e) => setMinPass(e.target.value)} disabled={!suite} />
        </Field>
      </div>
      <div className="mt-3 flex flex-wrap items-center gap-2">
        <Button variant="primary" onClick={() => void act(suite ? { version, requireSuite: suite, minPass: Number(minPass) } : { version })}>
          {suite ? "Promote if the suite passes" : "Promote"}
        </Button>
        {previous ? (
          <Button onClick={() => void act({ version: previous })}>
            Roll {label} back to {previous}
          </Button>
        ) : null}
        {current ? <span className="text-sm">{label} → {current.version}</span> : <span className="text-sm">{label} is not set.</span>}
      </div>
      {message ? (
        <p role="status" className="mt-2 text-sm">
          {message}
        </p>
      ) : null}
      {error ? <ErrorAlert>{error}</ErrorAlert> : null}
    </Panel>
  );
}

function History({ labels, keyNames }: { labels: WorkflowLabels; keyNames: ReadonlyMap<string, string> }) {
  return (
    <>
      <h2 className="mt-6 text-lg font-semibold">Label history</h2>
      <ScrollTable className="mt-2 w-full text-left text-sm">
        <TableHead columns={["When", "Label", "Change", "Gate", "By"]} />
        <tbody>
          {labels.history.map((m, i) => (
            <tr key={i} className="border-b border-zinc-100 dark:border-zinc-900">
              <td className="py-1 pr-3">{new Date(m.createdAt).toLocaleString()}</td>
              <td className="pr-3">{m.label}</td>
              <td className="pr-3">{m.outcome === "removed" ? "removed" : m.outcome === "refused" ? `refused ${m.version} (stays ${m.previous ?? "unset"})` : `${m.previous ?? "—"} → ${m.version}`}</td>
              <td className="pr-3">
                {m.evaluationId ? (
                  // The evaluation that gated the move, on its suite's page.
                  <Link href={`/suites?evaluation=${encodeURIComponent(m.evaluationId)}`} className="underline">
                    {`${Math.round((m.passRate ?? 0) * 100)}% · ${m.evaluationId}`}
                  </Link>
                ) : (
                  "—"
                )}
              </td>
              <td>{keyNames.get(m.keyId) ?? <span className="font-mono">{m.keyId}</span>}</td>
            </tr>
          ))}
        </tbody>
      </ScrollTable>
    </>
  );
}
