import type { Quota } from "@/lib/domain/key-limits";

const LABEL: Record<Quota["policy"], string> = {
  rpm: "Runs this minute",
  tpm: "Tokens this minute",
  concurrency: "Runs at once",
  daily: "Spent today (UTC)",
  monthly: "Spent this month (UTC)",
};

const show = (q: Quota, amount: string) => (q.unit === "usd" ? `$${amount}` : Number(amount).toLocaleString());

/** A key's limits as they stand: a meter per limit (used, and reserved by runs in progress), and when it resets. */
export function Quotas({ quotas }: { quotas: readonly Quota[] }) {
  if (quotas.length === 0) return <p className="text-sm text-zinc-600 dark:text-zinc-400">No limits or budgets: this key may run anything, at any rate.</p>;
  return (
    <ul className="grid gap-3 sm:grid-cols-2">
      {quotas.map((q) => {
        const limit = Number(q.limit);
        const usedPct = limit > 0 ? Math.min(100, (Number(q.used) / limit) * 100) : 0;
        const reservedPct = limit > 0 ? Math.min(100 - usedPct, (Number(q.reserved) / limit) * 100) : 0;
        return (
          <li key={q.policy} className="text-sm">
            <div className="flex justify-between gap-2">
              <span className="font-medium">{LABEL[q.policy]}</span>
              <span className="tabular-nums">
                {show(q, q.used)} of {show(q, q.limit)}
              </span>
            </div>
            <div
              role="meter"
              aria-label={LABEL[q.policy]}
              aria-valuemin={0}
              aria-valuemax={limit}
              aria-valuenow={Number(q.used)}
              className="mt-1 flex h-2 overflow-hidden rounded bg-zinc-200 dark:bg-zinc-800"
            >
              <span className="bg-blue-700" style={{ width: `${usedPct}%` }} />
              <span className="bg-blue-300 dark:bg-blue-500" style={{ width: `${reservedPct}%` }} />
            </div>
            <p className="mt-0.5 text-xs text-zinc-600 dark:text-zinc-400">
              {Number(q.reserved) > 0 ? `${show(q, q.reserved)} reserved by runs in progress · ` : ""}
              {q.resetsAt ? `resets ${new Date(q.resetsAt).toLocaleString()}` : "frees as runs end"}
            </p>
          </li>
        );
      })}
    </ul>
  );
}
