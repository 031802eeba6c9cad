"use client";

import { ROLES, type Role } from "@/lib/domain/roles";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ApiError, type ApiClient, type ApiKeyView } from "@/lib/client/api";
import { queryKeys } from "@/lib/client/query-keys";
import { describeLimits } from "@/lib/domain/key-limits";
import { RequireKey } from "../require-key";
import { Badge } from "../ui/badge";
import { Button } from "../ui/button";
import { Field, Select, TextInput } from "../ui/field";
import { ErrorAlert, Panel } from "../ui/panel";
import { TableHead } from "../ui/table-head";
import { changeOf, draftOf, LimitsFields, type LimitsDraft } from "./limits-form";
import { Quotas } from "./quotas";
import { Page } from "../ui/page";
import { ScrollTable } from "../ui/scroll-table";

const td = "py-1.5 pr-3 align-top";

export function KeysPage() {
  return <RequireKey>{(client, apiKey) => <Keys client={client} apiKey={apiKey} />}</RequireKey>;
}

function Keys({ client, apiKey }: { client: ApiClient; apiKey: string }) {
  const me = useQuery({ queryKey: queryKeys.me(apiKey), queryFn: ({ signal }) => client.me(signal), refetchInterval: 10_000 });
  const admin = me.data?.admin ?? false;
  const [editing, setEditing] = useState<ApiKeyView | "new" | null>(null);
  return (
    <Page>
      <div className="flex items-center gap-3">
        <h1 className="mr-auto text-2xl font-semibold">Keys</h1>
        {admin ? (
          <Button variant="primary" onClick={() => setEditing("new")}>
            New key
          </Button>
        ) : null}
      </div>
      <Panel className="mt-4" aria-labelledby="this-key">
        <h2 id="this-key" className="mb-2 font-medium">
          This key{me.data ? `: ${me.data.name}` : ""}
        </h2>
        {me.data ? (
          <p className="mb-2 text-sm" data-testid="key-role">
            <Badge tone={me.data.role === "admin" ? "info" : "neutral"}>{me.data.role}</Badge> in project {me.data.project.name} ({me.data.project.slug})
          </p>
        ) : null}
        {me.data ? <Quotas quotas={me.data.quotas} /> : null}
      </Panel>
      {editing ? <KeyEditor client={client} apiKey={apiKey} target={editing} onDone={() => setEditing(null)} /> : null}
      {admin ? <KeyTable client={client} apiKey={apiKey} onEdit={setEditing} /> : me.data ? <p className="mt-4 text-sm">Only admin keys manage the project's keys.</p> : null}
    </Page>
  );
}

function KeyTable({ client, apiKey, onEdit }: { client: ApiClient; apiKey: string; onEdit(key: ApiKeyView): void }) {
  const queryClient = useQueryClient();
  const keys = useQuery({ queryKey: queryKeys.keys(apiKey), queryFn: ({ signal }) => client.listKeys(signal) });
  const revoke = useMutation({
    mutationFn: (id: string) => client.revokeKey(id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.keys(apiKey) }),
  });
  return (
    <>
      {revoke.error ? (
        <div className="mt-4">
          <ErrorAlert>{(revoke.error as Error).message}</ErrorAlert>
        </div>
      ) : null}
      <div className="mt-4 overflow-x-auto">
        <ScrollTable className="w-full text-left text-sm">
          <TableHead columns={["Name", "Key", "Limits", "Last used", "Status", "Manage"]} />
          <tbody>
            {keys.data?.map((k) => (
              <tr key={k.id} className="border-b border-zinc-100 dark:border-zinc-900">
                <td className={td}>
                  {k.name} <Badge tone={k.role === "admin" ? "info" : "neutral"}>{k.role}</Badge>
                  <div className="font-mono text-xs text-zinc-600 dark:text-zinc-400">{k.id}</div>
                </td>
                <td className={`${td} font-mono`}>{k.prefix}…</td>
                <td className={td}>{describeLimits(k.limits)}</td>
                <td className={td}>{k.lastUsedAt ? new Date(k.lastUsedAt).toLocaleString() : "never"}</td>
                <td className={td}>{k.revokedAt ? <Badge tone="danger">revoked</Badge> : <Badge tone="success">active</Badge>}</td>
                <td className={td}>
                  {k.revokedAt ? null : (
                    <span className="flex gap-2">
                      <Button size="sm" aria-label={`Edit ${k.name}`} onClick={() => onEdit(k)}>
                        Edit
                      </Button>
                      <Button
                        size="sm"
                        variant="danger"
                        aria-label={`Revoke ${k.name}`}
                        onClick={() => {
                          if (window.confirm(`Revoke ${k.name}? Requests with it are refused at once.`)) revoke.mutate(k.id);
                        }}
                      >
                        Revoke
                      </Button>
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </ScrollTable>
      </div>
    </>
  );
}

/** Creates a key (then shows it once) or changes one's name and limits. */
function KeyEditor({ client, apiKey, target, onDone }: { client: ApiClient; apiKey: string; target: ApiKeyView | "new"; onDone(): void }) {
  const queryClient = useQueryClient();
  const existing = target === "new" ? null : target;
  const [name, setName] = useState(existing?.name ?? "");
  const [role, setRole] = useState<Role>("editor");
  const [draft, setDraft] = useState<LimitsDraft>(() => draftOf(existing?.limits ?? null));
  const [created, setCreated] = useState<{ key: string; webhookSecret: string } | null>(null);
  const save = useMutation({
    mutationFn: async () => {
      if (existing) return void (await client.updateKey(existing.id, { name, limits: changeOf(draft) }));
      const result = await client.createKey({ name, role, limits: changeOf(draft) });
      setCreated({ key: result.key, webhookSecret: result.webhookSecret });
    },
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.keys(apiKey) });
      await queryClient.invalidateQueries({ queryKey: queryKeys.me(apiKey) });
      if (existing) onDone();
    },
  });
  const problems = save.error instanceof ApiError ? save.error.errors : [];
  if (created) {
    return (
      <Panel className="mt-4" aria-labelledby="created-key">
        <h2 id="created-key" className="font-medium">
          Key created: copy it now, it is not shown again
        </h2>
        <p className="mt-2 break-all rounded bg-zinc-100 p-2 font-mono text-sm dark:bg-zinc-900" data-testid="created-key">
          {created.key}
        </p>
        <p className="mt-2 text-sm">
          Its callback events are signed with <span className="break-all font-mono">{created.webhookSecret}</span>
        </p>
        <div className="mt-3 flex gap-2">
          <Button onClick={() => void navigator.clipboard?.writeText(created.key)}>Copy key</Button>
          <Button variant="primary" onClick={onDone}>
            Done
          </Button>
        </div>
      </Panel>
    );
  }
  return (
    <Panel className="mt-4" aria-labelledby="key-editor">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <h2 id="key-editor" className="mb-3 font-medium">
          {existing ? `Edit ${existing.name}` : "New key"}
        </h2>
        <div className="grid gap-3 sm:grid-cols-3">
          <Field id="key-name" label="Name" problems={problems.filter((p) => p.path === "/name")}>
            <TextInput id="key-name" value={name} required maxLength={200} onChange={(e) => setName(e.target.value)} />
          </Field>
          {existing ? null : (
            <Field id="key-role" label="Role in this project" help="viewer reads; editor also runs and edits (not production); admin also keys, production, budgets">
              <Select id="key-role" value={role} onChange={(e) => setRole(e.target.value as Role)} aria-describedby="key-role-help">
                {ROLES.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </Select>
            </Field>
          )}
        </div>
        <h3 className="mb-2 mt-4 text-sm font-medium">Limits and budgets (blank: none)</h3>
        <LimitsFields idPrefix="key-limit" draft={draft} onChange={setDraft} problems={problems} />
        {save.error && problems.length === 0 ? (
          <div className="mt-3">
            <ErrorAlert>{(save.error as Error).message}</ErrorAlert>
          </div>
        ) : null}
        <div className="mt-4 flex gap-2">
          <Button type="submit" variant="primary" disabled={save.isPending}>
            {existing ? "Save" : "Create key"}
          </Button>
          <Button onClick={onDone}>Cancel</Button>
        </div>
      </form>
    </Panel>
  );
}
