/**
 * What one API key may do: rates, concurrency, workflows and spend. Browser-safe (the playground's
 * keys page edits them). Money is held in nano-dollars (10⁻⁹ USD), integers, so budgets add up
 * exactly; model prices per million tokens with up to three decimals are exact in them.
 */
export interface KeyLimits {
  /** Runs the key may start per minute. */
  rpm: number | null;
  /** Tokens (input and output) the key's runs may use per minute. */
  tpm: number | null;
  /** Runs of the key executing at once. */
  concurrency: number | null;
  /** The workflows the key may run; null: all. */
  workflows: string[] | null;
  /** Spend per UTC day, in nano-dollars. */
  budgetDailyNanos: number | null;
  /** Spend per UTC calendar month, in nano-dollars. */
  budgetMonthlyNanos: number | null;
}

export const NO_LIMITS: KeyLimits = { rpm: null, tpm: null, concurrency: null, workflows: null, budgetDailyNanos: null, budgetMonthlyNanos: null };

const NANOS_PER_USD = 1_000_000_000;
/** The most a budget or a charge may be: exact as a JS number of nano-dollars (≈ 9 million USD). */
export const MAX_NANOS = Number.MAX_SAFE_INTEGER;

/**
 * A decimal dollar amount ("12.5", "0.000001") in nano-dollars; digits past the ninth decimal round
 * up (a charge is never under-counted). Null for anything that is not a plain non-negative decimal
 * or is too large.
 */
export function usdToNanos(usd: string): number | null {
  const match = /^(\d{1,16})(?:\.(\d+))?$/.exec(usd.trim());
  if (!match) return null;
  const fraction = match[2] ?? "";
  let nanos = BigInt(match[1]!) * BigInt(NANOS_PER_USD) + BigInt((fraction.slice(0, 9) || "0").padEnd(9, "0"));
  if (/[1-9]/.test(fraction.slice(9))) nanos += 1n;
  return nanos <= BigInt(MAX_NANOS) ? Number(nanos) : null;
}

/** Nano-dollars as a decimal dollar string without trailing zeros ("0.25", "12"). */
export function nanosToUsd(nanos: number): string {
  const sign = nanos < 0 ? "-" : "";
  const abs = BigInt(Math.abs(Math.round(nanos)));
  const whole = abs / BigInt(NANOS_PER_USD);
  const fraction = (abs % BigInt(NANOS_PER_USD)).toString().padStart(9, "0").replace(/0+$/, "");
  return `${sign}${whole}${fraction ? `.${fraction}` : ""}`;
}

/** A key's limits as the API and the command line show them: budgets in decimal dollars. */
export interface LimitsView {
  rpm: number | null;
  tpm: number | null;
  concurrency: number | null;
  workflows: string[] | null;
  budgetDailyUsd: string | null;
  budgetMonthlyUsd: string | null;
}

export function limitsView(limits: KeyLimits): LimitsView {
  return {
    rpm: limits.rpm,
    tpm: limits.tpm,
    concurrency: limits.concurrency,
    workflows: limits.workflows,
    budgetDailyUsd: limits.budgetDailyNanos === null ? null : nanosToUsd(limits.budgetDailyNanos),
    budgetMonthlyUsd: limits.budgetMonthlyNanos === null ? null : nanosToUsd(limits.budgetMonthlyNanos),
  };
}

/** A change of limits as callers send it (null clears a limit, absent leaves it) in stored form; budgets must already be valid amounts. */
export function limitsPatch(view: Partial<LimitsView>): Partial<KeyLimits> {
  const patch: Partial<KeyLimits> = {};
  if (view.rpm !== undefined) patch.rpm = view.rpm;
  if (view.tpm !== undefined) patch.tpm = view.tpm;
  if (view.concurrency !== undefined) patch.concurrency = view.concurrency;
  if (view.workflows !== undefined) patch.workflows = view.workflows;
  if (view.budgetDailyUsd !== undefined) patch.budgetDailyNanos = view.budgetDailyUsd === null ? null : usdToNanos(view.budgetDailyUsd);
  if (view.budgetMonthlyUsd !== undefined) patch.budgetMonthlyNanos = view.budgetMonthlyUsd === null ? null : usdToNanos(view.budgetMonthlyUsd);
  return patch;
}

/** One line for a table: "rpm 60, budget 5/day, workflows a,b" ("none" without limits). */
export function describeLimits(view: LimitsView): string {
  const parts = [
    view.rpm !== null && `rpm ${view.rpm}`,
    view.tpm !== null && `tpm ${view.tpm}`,
    view.concurrency !== null && `concurrency ${view.concurrency}`,
    view.budgetDailyUsd !== null && `$${view.budgetDailyUsd}/day`,
    view.budgetMonthlyUsd !== null && `$${view.budgetMonthlyUsd}/month`,
    view.workflows !== null && `workflows ${view.workflows.join(",") || "(none)"}`,
  ].filter((p): p is string => typeof p === "string");
  return parts.length === 0 ? "none" : parts.join(", ");
}

/** One of a key's limits as it stands now; amounts are decimal strings of runs, tokens or dollars. */
export interface Quota {
  policy: "rpm" | "tpm" | "concurrency" | "daily" | "monthly";
  unit: "runs" | "tokens" | "usd";
  limit: string;
  used: string;
  /** Held by runs in progress (their worst case) until they settle. */
  reserved: string;
  remaining: string;
  resetsAt: string | null;
}
