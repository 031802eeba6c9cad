"use client";
import { useQuery } from "@tanstack/react-query";
import type { ApiClient, ModelStatus } from "@/lib/client/api";
import { queryKeys } from "@/lib/client/query-keys";

/** The configured models' states, polled while a local model is still loading. */
function useModels(client: ApiClient, apiKey: string) {
  return useQuery({
    queryKey: queryKeys.models(apiKey),
    queryFn: ({ signal }) => client.listModels(signal),
    refetchInterval: (query) => (query.state.data?.some((m: ModelStatus) => m.status.state === "loading") ? 2_000 : false),
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
  const relevant = (models.data ?? []).filter((m) => alias === undefined || m.alias === alias);
  const down = relevant.filter((m) => m.status.state === "unavailable");
  const loading = relevant.filter((m) => m.status.state === "loading");
  if (down.length === 0 && loading.length === 0) return null;
  return (
    <div role={down.length ? "alert" : "status"} className="rounded border border-amber-400 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100 lg:col-span-2">
      {down.map((m) =>
        m.status.state === "unavailable" ? (
          <div key={m.alias}>
            <p>
              <strong>Model “{m.alias}” is not available</strong> — runs on it are off until it is.
            </p>
            <details className="mt-1">
              <summary className="cursor-pointer font-medium underline-offset-2 hover:underline">Why, and how to fix it</summary>
              <p className="mt-1 break-words">{m.status.detail}</p>
              <ul className="mt-1 list-disc space-y-0.5 pl-5">
                <li>
                  a model file: <code>genserve serve --model /path/to/model.gguf</code>, or <code>path:</code> in genserve.yaml;
                </li>
                <li>
                  an <code>hf:&lt;user&gt;/&lt;repo&gt;/&lt;file&gt;.gguf</code> URI this machine can reach (downloaded once, on the next start);
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
          </div>
        ) : null,
      )}
      {loading.map((m) => (
        <p key={m.alias}>Model “{m.alias}” is loading…</p>
      ))}
    </div>
  );
}
