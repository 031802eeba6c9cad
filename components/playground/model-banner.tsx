"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ApiError, type ApiClient, type ModelStatus } from "@/lib/client/api";
import { queryKeys } from "@/lib/client/query-keys";
import { Button } from "../ui/button";

/** The configured models' states, polled while a local model is still loading. */
function useModels(client: ApiClient, apiKey: string) {
  return useQuery({
    queryKey: queryKeys.models(apiKey),
    queryFn: ({ signal }) => client.listModels(signal),
    refetchInterval: (query) => (query.state.data?.some((m: ModelStatus) => m.status.state === "downloading") ? 700 : query.state.data?.some((m: ModelStatus) => m.status.state === "loading") ? 2_000 : false),
  });
}

/** A model alias's state and capabilities (undefined while the list loads). */
export function useModel(client: ApiClient, apiKey: string, alias: string | undefined): ModelStatus | undefined {
  return useModels(client, apiKey).data?.find((m) => m.alias === alias);
}

/**
 * Names a model that cannot run (no file, failed download, failed load) in one line, with the
 * fixes one click away, so the playground says so before a run would answer 503 — compact enough
 * that a phone's first screen still shows the composer. Run is disabled meanwhile (the playground, from useModel).
 */
export function ModelBanner({ client, apiKey, alias }: { client: ApiClient; apiKey: string; alias?: string }) {
  const models = useModels(client, apiKey);
  const admin = useQuery({ queryKey: queryKeys.me(apiKey), queryFn: ({ signal }) => client.me(signal) }).data?.admin ?? false;
  // Models a retry was asked for here: when one comes back unavailable, its new reason is shown unfolded.
  const [retried, setRetried] = useState<ReadonlySet<string>>(new Set());
  const relevant = (models.data ?? []).filter((m) => alias === undefined || m.alias === alias);
  const down = relevant.filter((m) => m.status.state === "unavailable");
  const loading = relevant.filter((m) => m.status.state === "loading" || m.status.state === "downloading");
  if (down.length === 0 && loading.length === 0) return null;
  return (
    <div role={down.length ? "alert" : "status"} className="rounded border border-amber-400 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100 lg:col-span-2">
      {down.map((m) => (m.status.state === "unavailable" ? <Unavailable key={m.alias} client={client} apiKey={apiKey} model={m} detail={m.status.detail} admin={admin} retried={retried.has(m.alias)} onRetried={() => setRetried((r) => new Set(r).add(m.alias))} /> : null))}
      {loading.map((m) => (
        <p key={m.alias}>{m.status.state === "downloading" ? `Model “${m.alias}” is downloading${progressText(m.status)}…` : `Model “${m.alias}” is loading…`}</p>
      ))}
    </div>
  );
}

function progressText({ downloadedBytes, totalBytes }: { downloadedBytes: number; totalBytes: number }): string {
  if (totalBytes <= 0) return "";
  const mb = (n: number) => (n / 1_048_576).toFixed(n < 10_485_760 ? 1 : 0);
  return ` (${Math.floor((downloadedBytes / totalBytes) * 100)}%, ${mb(downloadedBytes)} of ${mb(totalBytes)} MB)`;
}

/** One unavailable model: the reason and fixes folded, and for admins a Retry download that reports how it went. */
function Unavailable(props: { client: ApiClient; apiKey: string; model: ModelStatus; detail: string; admin: boolean; retried: boolean; onRetried(): void }) {
  const { client, apiKey, model, detail, admin, retried } = props;
  const queryClient = useQueryClient();
  const retry = useMutation({
    mutationFn: () => client.retryModelDownload(model.alias),
    onSuccess: async () => {
      props.onRetried();
      await queryClient.invalidateQueries({ queryKey: queryKeys.models(apiKey) });
    },
  });
  return (
    <div>
      <p>
        <strong>Model “{model.alias}” is not available</strong> — runs on it are off until it is.
      </p>
      {retried && !retry.isPending ? (
        <p className="mt-1 break-words" data-testid="retry-failed">
          <strong>Retry failed:</strong> {detail}
        </p>
      ) : null}
      {retry.error ? <p className="mt-1 break-words">Retry refused: {retry.error instanceof ApiError ? retry.error.detail : (retry.error as Error).message}</p> : null}
      {/* The fixes folded, and Retry download beside them on the same line (a phone keeps the composer in view). */}
      <div className="mt-1 flex items-start gap-3">
        <details className="min-w-0 flex-1">
          <summary className="cursor-pointer font-medium underline-offset-2 hover:underline">Why, and how to fix it</summary>
          <p className="mt-1 break-words">{detail}</p>
          <ul className="mt-1 list-disc space-y-0.5 pl-5">
            <li>
              a model file: <code>genserve serve --model /path/to/model.gguf</code>, or <code>path:</code> in genserve.yaml;
            </li>
            <li>
              an <code>hf:&lt;user&gt;/&lt;repo&gt;/&lt;file&gt;.gguf</code> URI this machine can reach (downloaded on the next start{admin ? ", or with Retry download" : ""});
            </li>
            <li>
              a provider such as <code>openai-compatible</code> in genserve.yaml.
            </li>
          </ul>
          <p className="mt-1">
            <a href="/docs#configure-models" className="font-medium underline">
              Configuring models
            </a>{" "}
            (genserve.yaml, with examples)
          </p>
        </details>
        {admin && model.provider === "llama-cpp" ? (
          <Button size="sm" onClick={() => retry.mutate()} disabled={retry.isPending}>
            {retry.isPending ? "Retrying…" : "Retry download"}
          </Button>
        ) : null}
      </div>
    </div>
  );
}
