import "server-only";
import { nanosToUsd, type KeyLimits, type Quota } from "../domain/key-limits";
import { GenserveError } from "../errors";
import { CONCURRENCY_METER } from "../store/meters";
import type { MeterCharge, MeterState, Store } from "../store/store-types";

/**
 * A key's limits as meters in the store, shared by every replica: each run reserves its worst case
 * on every metered limit before the model is called (atomically: all of them or none), and settles
 * to what it really used when it ends.
 *
 *   rpm:<minute>      runs started in a UTC minute            (fixed 60 s windows)
 *   tpm:<minute>      tokens used in a UTC minute             reserved: prompt estimate + output cap
 *   concurrency       runs executing now                      settles to 0
 *   daily:<date>      nano-dollars spent on a UTC day         reserved: the worst case at the model's prices
 *   monthly:<month>   nano-dollars spent in a UTC month
 */
export type MeterKind = "rpm" | "tpm" | "concurrency" | "daily" | "monthly";

export const kindOf = (meter: string): MeterKind => meter.split(":")[0] as MeterKind;

export function meterName(kind: MeterKind, at: Date): string {
  const iso = at.toISOString();
  switch (kind) {
    case "rpm":
    case "tpm":
      return `${kind}:${Math.floor(at.getTime() / 60_000)}`;
    case "daily":
      return `daily:${iso.slice(0, 10)}`;
    case "monthly":
      return `monthly:${iso.slice(0, 7)}`;
    case "concurrency":
      return CONCURRENCY_METER;
  }
}

/** When a meter's window ends and its count starts again (null: it never resets). */
export function resetsAt(meter: string): Date | null {
  const [kind, window] = meter.split(":") as [MeterKind, string | undefined];
  switch (kind) {
    case "rpm":
    case "tpm":
      return new Date((Number(window) + 1) * 60_000);
    case "daily": {
      const day = new Date(`${window}T00:00:00.000Z`);
      return new Date(day.getTime() + 86_400_000);
    }
    case "monthly": {
      const [y, m] = window!.split("-").map(Number) as [number, number];
      return new Date(Date.UTC(y, m, 1));
    }
    case "concurrency":
      return null;
  }
}

/** What one run (or one more attempt of it) would take at most. */
export interface WorstCase {
  tokens: number;
  nanos: number;
}

/**
 * The reservations a run makes when it is admitted: one run on rpm, its worst-case tokens on tpm,
 * a slot (unless `slot` is false: a queued run takes its slot when it starts) and its worst-case
 * cost on each budget. Only limits the key has are metered.
 */
export function admissionCharges(limits: KeyLimits, at: Date, worst: WorstCase, options: { slot: boolean }): MeterCharge[] {
  const charges: MeterCharge[] = [];
  if (limits.rpm !== null) charges.push({ meter: meterName("rpm", at), amount: 1, limit: limits.rpm });
  if (limits.tpm !== null) charges.push({ meter: meterName("tpm", at), amount: worst.tokens, limit: limits.tpm });
  if (options.slot) charges.push(...slotCharges(limits));
  charges.push(...budgetCharges(limits, at, worst.nanos));
  return charges;
}

export function slotCharges(limits: KeyLimits): MeterCharge[] {
  return limits.concurrency === null ? [] : [{ meter: CONCURRENCY_METER, amount: 1, limit: limits.concurrency }];
}

/** The budget reservations of a further attempt (a retry costs again). */
export function budgetCharges(limits: KeyLimits, at: Date, nanos: number): MeterCharge[] {
  const charges: MeterCharge[] = [];
  if (limits.budgetDailyNanos !== null) charges.push({ meter: meterName("daily", at), amount: nanos, limit: limits.budgetDailyNanos });
  if (limits.budgetMonthlyNanos !== null) charges.push({ meter: meterName("monthly", at), amount: nanos, limit: limits.budgetMonthlyNanos });
  return charges;
}

const POLICY: Record<Exclude<MeterKind, "daily" | "monthly">, { window?: number; unit?: string }> = {
  rpm: { window: 60 },
  tpm: { window: 60, unit: "tokens" },
  concurrency: { unit: "concurrent-requests" },
};

/**
 * The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers) for a key's rate and
 * concurrency limits: `RateLimit-Policy` names each policy with its quota (q), window (w) and quota
 * unit (qu); `RateLimit` gives what remains of each (r) and the seconds until its window resets (t).
 */
export function rateLimitHeaders(states: readonly MeterState[], now: Date): Record<string, string> {
  const rated = states.filter((s) => kindOf(s.meter) in POLICY);
  if (rated.length === 0) return {};
  const policy = rated.map((s) => {
    const kind = kindOf(s.meter) as keyof typeof POLICY;
    const p = POLICY[kind];
    return `"${kind}";q=${s.limit}${p.window ? `;w=${p.window}` : ""}${p.unit ? `;qu="${p.unit}"` : ""}`;
  });
  const current = rated.map((s) => {
    const reset = resetsAt(s.meter);
    const remaining = Math.max(0, s.limit - s.used - s.reserved);
    return `"${kindOf(s.meter)}";r=${remaining}${reset ? `;t=${Math.max(0, Math.ceil((reset.getTime() - now.getTime()) / 1000))}` : ""}`;
  });
  return { "RateLimit-Policy": policy.join(", "), RateLimit: current.join(", ") };
}

/**
 * The error for a refused admission: 429 `rate_limited` for rates and concurrency (with Retry-After
 * and the RateLimit fields), 402 `budget_exceeded` naming the budget and when it resets.
 */
export function refusal(refused: MeterState, states: readonly MeterState[], now: Date): GenserveError {
  const kind = kindOf(refused.meter);
  if (kind === "daily" || kind === "monthly") {
    const reset = resetsAt(refused.meter)!;
    return new GenserveError("budget_exceeded", {
      detail: `This key's ${kind} budget of ${nanosToUsd(refused.limit)} USD would be exceeded: ${nanosToUsd(refused.used)} USD spent and ${nanosToUsd(refused.reserved)} USD reserved by runs in progress, and this run may cost up to ${nanosToUsd(refused.amount)} USD. It resets at ${reset.toISOString()}.`,
      extensions: { budget: { period: kind, limitUsd: nanosToUsd(refused.limit), spentUsd: nanosToUsd(refused.used), reservedUsd: nanosToUsd(refused.reserved), resetsAt: reset.toISOString() } },
    });
  }
  const reset = resetsAt(refused.meter);
  const retryAfter = reset ? Math.max(1, Math.ceil((reset.getTime() - now.getTime()) / 1000)) : 1;
  const what =
    kind === "rpm"
      ? `start ${refused.limit} runs per minute`
      : kind === "tpm"
        ? `use ${refused.limit} tokens per minute (this run may use up to ${refused.amount}; ${refused.used + refused.reserved} are used or reserved this minute)`
        : `run ${refused.limit} runs at once`;
  return new GenserveError("rate_limited", {
    detail: `This key may ${what}; retry in ${retryAfter} s.`,
    headers: { "Retry-After": String(retryAfter), ...rateLimitHeaders(states, now) },
    extensions: { limit: { policy: kind, quota: refused.limit, retryAfterSeconds: retryAfter } },
  });
}

/** A key's limits with the configuration's default rate (limits.runsPerMinute; 0: none) where the key sets none. */
export function effectiveLimits(limits: KeyLimits, defaults: { runsPerMinute: number }): KeyLimits {
  return limits.rpm === null && defaults.runsPerMinute > 0 ? { ...limits, rpm: defaults.runsPerMinute } : limits;
}

/** Meters of windows long over (nothing reserved on them) that the store may forget. */
export function sweepRules(now: Date): { prefix: string; before: string }[] {
  const ago = (ms: number) => new Date(now.getTime() - ms).toISOString();
  return [
    { prefix: "rpm:", before: ago(10 * 60_000) },
    { prefix: "tpm:", before: ago(10 * 60_000) },
    { prefix: "daily:", before: ago(3 * 86_400_000) },
    { prefix: "monthly:", before: ago(93 * 86_400_000) },
  ];
}

/**
 * What the store may forget by `now`: meters of windows long over, and (with `passwordWindowMs`)
 * ended sessions, used or expired sign-in tokens and pending sign-ins, past windows of password attempts.
 */
export async function sweepStore(store: Store, now: Date, passwordWindowMs: number): Promise<void> {
  await store.usage.sweep(sweepRules(now));
  await store.people.sweep(new Date(now.getTime() - passwordWindowMs).toISOString());
}

/** Each limit the key has (with the configuration's default rate) as it stands at `now`. */
export async function keyQuotas(store: Store, keyId: string, limits: KeyLimits, now: Date): Promise<Quota[]> {
  const wanted: { kind: MeterKind; limit: number }[] = [];
  if (limits.rpm !== null) wanted.push({ kind: "rpm", limit: limits.rpm });
  if (limits.tpm !== null) wanted.push({ kind: "tpm", limit: limits.tpm });
  if (limits.concurrency !== null) wanted.push({ kind: "concurrency", limit: limits.concurrency });
  if (limits.budgetDailyNanos !== null) wanted.push({ kind: "daily", limit: limits.budgetDailyNanos });
  if (limits.budgetMonthlyNanos !== null) wanted.push({ kind: "monthly", limit: limits.budgetMonthlyNanos });
  if (wanted.length === 0) return [];
  const meters = await store.keys.meters(keyId, wanted.map((w) => meterName(w.kind, now)));
  return wanted.map(({ kind, limit }, i) => {
    const { meter, used, reserved } = meters[i]!;
    const money = kind === "daily" || kind === "monthly";
    const show = (n: number) => (money ? nanosToUsd(n) : String(n));
    return {
      policy: kind,
      unit: money ? "usd" : kind === "tpm" ? "tokens" : "runs",
      limit: show(limit),
      used: show(used),
      reserved: show(reserved),
      remaining: show(Math.max(0, limit - used - reserved)),
      resetsAt: resetsAt(meter)?.toISOString() ?? null,
    };
  });
}
