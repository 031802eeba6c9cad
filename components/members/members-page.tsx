"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { Role } from "@/lib/domain/roles";
import { membersClient, type MemberView } from "@/lib/client/members-client";
import { queryKeys } from "@/lib/client/query-keys";
import { useApiKey } from "../key-context";
import { RequireKey } from "../require-key";
import { Button } from "../ui/button";
import { Select } from "../ui/field";
import { ErrorAlert } from "../ui/panel";
import { Page } from "../ui/page";
import { ScrollTable } from "../ui/scroll-table";
import { TableHead } from "../ui/table-head";
import { InviteForm } from "./invite-form";

const td = "py-1.5 pr-3 align-middle";
const when = (at: string | null) => (at ? <time dateTime={at}>{new Date(at).toLocaleString()}</time> : "never");

/** The project's people (admins): their roles, removal, pending invitations, and inviting more. */
export function MembersPage() {
  return <RequireKey>{(_client, apiKey) => <Members apiKey={apiKey} />}</RequireKey>;
}

function Members({ apiKey }: { apiKey: string }) {
  const { session } = useApiKey();
  const csrfToken = session?.csrfToken ?? "";
  const queryClient = useQueryClient();
  const list = useQuery({ queryKey: queryKeys.members(apiKey), queryFn: () => membersClient(csrfToken).list(), enabled: csrfToken !== "" && session?.role === "admin" });
  const refresh = () => void queryClient.invalidateQueries({ queryKey: queryKeys.members(apiKey) });
  const change = useMutation({
    mutationFn: ({ member, role }: { member: MemberView; role: Role | null }) => (role === null ? membersClient(csrfToken).remove(member.userId) : membersClient(csrfToken).setRole(member.userId, role).then(() => undefined)),
    onSettled: refresh,
  });
  const revoke = useMutation({ mutationFn: (id: string) => membersClient(csrfToken).revokeInvite(id), onSettled: refresh });
  const remove = (member: MemberView) => {
    if (window.confirm(`Remove ${member.email} from ${session?.project.name ?? "this project"}? Their sessions in it end.`)) change.mutate({ member, role: null });
  };
  return (
    <Page width="full">
      <h1 className="text-2xl font-semibold" tabIndex={-1}>
        Members of {session?.project.name ?? "this project"}
      </h1>
      <p className="mt-1 text-sm text-zinc-700 dark:text-zinc-300">People and their roles here: viewers read, editors also run and edit, admins also manage keys, members, the production label and budgets.</p>
      {session && session.role !== "admin" ? (
        <p className="mt-4 text-sm">Only the project&apos;s admins manage its members.</p>
      ) : (
        <>
          <InviteForm csrfToken={csrfToken} apiKey={apiKey} />
          {list.error ? <ErrorAlert>{(list.error as Error).message}</ErrorAlert> : null}
          {change.error ? <ErrorAlert>{(change.error as Error).message}</ErrorAlert> : null}
          <h2 className="mt-6 text-lg font-semibold">People</h2>
          <ScrollTable className="mt-2 w-full min-w-[40rem] text-left text-sm" aria-label="Members">
            <TableHead columns={["Email", "Role", "Member since", "Last active", ""]} />
            <tbody>
              {(list.data?.members ?? []).map((m) => (
                <tr key={m.userId} className="border-b border-zinc-100 dark:border-zinc-900">
                  <td className={td}>
                    {m.email}
                    {m.userId === session?.user?.id ? " (you)" : null}
                  </td>
                  <td className={td}>
                    <Select compact aria-label={`Role of ${m.email}`} value={m.role} disabled={change.isPending} onChange={(e) => change.mutate({ member: m, role: e.target.value as Role })}>
                      <option value="viewer">viewer</option>
                      <option value="editor">editor</option>
                      <option value="admin">admin</option>
                    </Select>
                  </td>
                  <td className={td}>{when(m.since)}</td>
                  <td className={td}>{when(m.lastActiveAt)}</td>
                  <td className={td}>
                    <Button onClick={() => remove(m)} disabled={change.isPending} aria-label={`Remove ${m.email}`}>
                      Remove
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </ScrollTable>
          <h2 className="mt-6 text-lg font-semibold">Pending invitations</h2>
          {list.data && list.data.invites.length === 0 ? <p className="mt-2 text-sm">None.</p> : null}
          <ul className="mt-2 space-y-1 text-sm">
            {(list.data?.invites ?? []).map((i) => (
              <li key={i.id} className="flex flex-wrap items-center gap-2">
                <span>
                  {i.email} as {i.role}, until {new Date(i.expiresAt).toLocaleDateString()}
                </span>
                <Button onClick={() => revoke.mutate(i.id)} disabled={revoke.isPending} aria-label={`Revoke the invitation of ${i.email}`}>
                  Revoke
                </Button>
              </li>
            ))}
          </ul>
        </>
      )}
    </Page>
  );
}
