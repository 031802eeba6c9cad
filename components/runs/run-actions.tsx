"use client";

import Link from "next/link";
import { useEffect, useRef, useState } from "react";
import type { ApiClient, Replay, Share } from "@/lib/client/api";
import { formatUsd } from "@/lib/client/format";
import { Button } from "../ui/button";
import { Field, Select, TextInput } from "../ui/field";
import { ErrorAlert, Panel } from "../ui/panel";

/** Replay (the same bundle, or on another version or label) and share a run. */
export function RunActions({ client, run }: { client: ApiClient; run: { id: string; workflowSlug: string; workflowVersion: string | null; operation: string } }) {
  const [target, setTarget] = useState("");
  const [replay, setReplay] = useState<Replay | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [hide, setHide] = useState("");
  const [expires, setExpires] = useState("7d");
  const [share, setShare] = useState<Share | null>(null);

  const doReplay = async (workflowSlug?: string) => {
    setBusy(true);
    setError(null);
    try {
      setReplay(await client.replayRun(run.id, workflowSlug ? { workflowSlug } : {}));
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const doShare = async () => {
    setError(null);
    try {
      const hideFields = hide.split(",").map((s) => s.trim()).filter(Boolean);
      setShare(await client.shareRun(run.id, { expiresIn: expires, hideFields }));
    } catch (e) {
      setError((e as Error).message);
    }
  };

  return (
    <Panel className="mt-6">
      <h2 className="text-lg font-semibold">Replay and share</h2>
      <div className="mt-2 flex flex-wrap items-end gap-3">
        <Button variant="primary" disabled={busy} onClick={() => void doReplay()}>
          {busy ? "Replaying…" : `Replay (${run.workflowSlug}@${run.workflowVersion ?? "current"})`}
        </Button>
        <div className="w-56">
          <Field id="replay-on" label="Replay on (version or label)">
            <TextInput id="replay-on" value={target} placeholder={`${run.workflowSlug}@staging`} onChange={(e) => setTarget(e.target.value)} />
          </Field>
        </div>
        <Button disabled={busy || !target} onClick={() => void doReplay(target.includes("@") ? target : `${run.workflowSlug}@${target}`)}>
          Replay on…
        </Button>
      </div>
      {replay ? (
        <div className="mt-3 text-sm" role="status">
          <p>
            <Link className="underline" href={`/runs/${replay.runId}`}>
              {replay.runId}
            </Link>{" "}
            on {replay.workflowSlug}: {replay.identical ? "identical output" : `${replay.differences.length} difference(s)`} · {formatUsd(replay.metadata.cost)}
          </p>
          {replay.differences.length > 0 && (
            <ul className="mt-1 font-mono text-xs" aria-label="Differences from the original">
              {replay.differences.map((d) => (
                <li key={d.path}>
                  {d.kind} {d.path}: {JSON.stringify(d.left)} → {JSON.stringify(d.right)}
                </li>
              ))}
            </ul>
          )}
          {replay.notes.map((n) => (
            <p key={n} className="text-xs text-zinc-600 dark:text-zinc-400">
              {n}
            </p>
          ))}
        </div>
      ) : null}
      <div className="mt-4 flex flex-wrap items-end gap-3">
        <div className="w-64">
          <Field id="share-hide" label="Hide fields (JSON Pointers)">
            <TextInput id="share-hide" value={hide} placeholder="/email, /customer/phone" onChange={(e) => setHide(e.target.value)} />
          </Field>
        </div>
        <div className="w-32">
          <Field id="share-expires" label="Expires in">
            <Select id="share-expires" value={expires} onChange={(e) => setExpires(e.target.value)}>
              {["1h", "1d", "7d", "30d", "never"].map((v) => (
                <option key={v}>{v}</option>
              ))}
            </Select>
          </Field>
        </div>
        <Button onClick={() => void doShare()}>Create share link</Button>
      </div>
      {share?.url ? <ShareLink url={share.url} /> : null}
      {error ? <ErrorAlert>{error}</ErrorAlert> : null}
    </Panel>
  );
}

/**
 * A new share link, shown once (only its hash is kept): in view, with a Copy button, since leaving
 * the page loses it. The status says when it was copied.
 */
function ShareLink({ url }: { url: string }) {
  const [copied, setCopied] = useState<"yes" | "failed" | null>(null);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => box.current?.scrollIntoView({ block: "nearest" }), []);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(url);
      setCopied("yes");
    } catch {
      setCopied("failed");
    }
  };
  return (
    <div ref={box} className="mt-3 rounded border border-blue-300 bg-blue-50 p-3 text-sm dark:border-blue-800 dark:bg-blue-950">
      <p>
        <strong>Anyone with this link can see the run.</strong> It is shown only now: copy it before you leave this page.
      </p>
      <div className="mt-2 flex flex-wrap items-center gap-2">
        <a className="min-w-0 break-all font-mono underline" href={url} data-testid="share-url">
          {url}
        </a>
        <Button variant="primary" onClick={() => void copy()}>
          {copied === "yes" ? "Copied" : "Copy link"}
        </Button>
        <span role="status" className="text-xs">
          {copied === "yes" ? "Link copied to the clipboard." : copied === "failed" ? "Could not copy: select the link and copy it." : ""}
        </span>
      </div>
    </div>
  );
}
