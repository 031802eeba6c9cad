"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import type { Role } from "@/lib/domain/roles";
import { membersClient } from "@/lib/client/members-client";
import { queryKeys } from "@/lib/client/query-keys";
import { Button } from "../ui/button";
import { Field, Select, TextInput } from "../ui/field";
import { ErrorAlert, Panel } from "../ui/panel";

/** Invites a person by email with a role; shows the one-time link (no email is sent) with a Copy button. */
export function InviteForm({ csrfToken, apiKey }: { csrfToken: string; apiKey: string }) {
  const queryClient = useQueryClient();
  const [copied, setCopied] = useState(false);
  const invite = useMutation({
    mutationFn: ({ email, role }: { email: string; role: Role }) => membersClient(csrfToken).invite(email, role),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: queryKeys.members(apiKey) }),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    setCopied(false);
    invite.mutate({ email: String(data.get("email") ?? "").trim(), role: String(data.get("role")) as Role });
  };
  const copy = async (url: string) => {
    await navigator.clipboard.writeText(url);
    setCopied(true);
  };
  return (
    <Panel className="mt-4" aria-labelledby="invite-heading">
      <h2 id="invite-heading" className="text-lg font-semibold">
        Invite a person
      </h2>
      <form onSubmit={submit} className="mt-2 grid grid-cols-1 gap-3 sm:grid-cols-[minmax(0,2fr)_minmax(0,1fr)_auto] sm:items-end">
        <Field id="invite-email" label="Email">
          <TextInput id="invite-email" name="email" type="email" required autoComplete="off" />
        </Field>
        <Field id="invite-role" label="Role">
          <Select id="invite-role" name="role" defaultValue="viewer">
            <option value="viewer">viewer</option>
            <option value="editor">editor</option>
            <option value="admin">admin</option>
          </Select>
        </Field>
        <Button type="submit" variant="primary" size="lg" disabled={invite.isPending}>
          {invite.isPending ? "Inviting…" : "Invite"}
        </Button>
      </form>
      {invite.error ? <ErrorAlert>{(invite.error as Error).message}</ErrorAlert> : null}
      {invite.data ? (
        <div className="mt-3 text-sm" role="status">
          <p>
            Send this link to {invite.data.email} (it works once, until {new Date(invite.data.expiresAt).toLocaleDateString()}; it is shown only now, and no email is sent):
          </p>
          <div className="mt-1 flex flex-wrap items-center gap-2">
            <TextInput aria-label="Invitation link" readOnly value={invite.data.url} className="min-w-0 flex-1 font-mono text-xs" onFocus={(e) => e.currentTarget.select()} />
            <Button onClick={() => void copy(invite.data.url)}>{copied ? "Copied" : "Copy"}</Button>
          </div>
        </div>
      ) : null}
    </Panel>
  );
}
