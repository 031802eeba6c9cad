/**
 * How the playground shows amounts and times: durations in the unit a person reads at a glance
 * ("364 ms", "1.62 s", "2 min 5 s"), dollar amounts with their sign and all their digits. Browser-safe.
 */

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1_000).toFixed(2)} s`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms - minutes * 60_000) / 1_000)} s`;
}

/** A decimal dollar string as the API gives it ("0.0000555") with its sign: "$0.0000555". */
export function formatUsd(amount: string | null | undefined): string {
  if (amount === null || amount === undefined || amount === "") return "—";
  return amount.startsWith("-") ? `-$${amount.slice(1)}` : `$${amount}`;
}

/** How long ago an instant was, as a person says it: "just now", "4 min ago", "3 h ago", "2 d ago". */
export function formatAgo(iso: string, now = Date.now()): string {
  const seconds = Math.round((now - Date.parse(iso)) / 1_000);
  if (!Number.isFinite(seconds)) return "—";
  if (seconds < 45) return "just now";
  if (seconds < 3_600) return `${Math.max(1, Math.round(seconds / 60))} min ago`;
  if (seconds < 86_400) return `${Math.round(seconds / 3_600)} h ago`;
  return `${Math.round(seconds / 86_400)} d ago`;
}
