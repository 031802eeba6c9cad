"use client";
import { useQuery } from "@tanstack/react-query";
import type { ApiClient, ModelStatus } from "@/lib/client/api";
import { queryKeys } from "@/lib/client/query-keys";

/**
 * Names a model that cannot run (no file, failed download, failed load) and how to fix it, so the
 * playground says so before a run answers 503. Polls while a local model is still loading.
 */
export function ModelBanner({ client, apiKey, alias }: { client: ApiClient; apiKey: string; alias?: string }) {
  const models = useQuery({
    queryKey: queryKeys.models(apiKey),
    queryFn: ({ signal }) => client.listModels(signal),
    refetchInterval: (query) => (query.state.data?.some((m: ModelStatus) => m.status.state === "loading") ? 2_000 : false),
  });
  const relevant = (models.data ?? []).filter((m) => alias === undefined || m.alias === alias);
  const down = relevant.filter((m) => m.status.state === "unavailable");
  const loading = relevant.filter((m) => m.status.state === "loading");
  if (down.length === 0 && loading.length === 0) return null;
  return (
    <div role={down.length ? "alert" : "status"} className="rounded border border-amber-400 bg-amber-50 p-3 text-sm text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100 lg:col-span-2">
      {down.map((m) =>
        m.status.state === "unavailable" ? (
          <p key={m.alias}>
            <strong>Model “{m.alias}” is not available.</strong> {m.status.detail} {m.status.fix}
          </p>
        ) : null,
      )}
      {loading.map((m) => (
        <p key={m.alias}>Model “{m.alias}” is loading…</p>
      ))}
    </div>
  );
}
