import "server-only";
import type { Admission, MeterCharge, MeterState, Settlement } from "./store-types";

/**
 * The arithmetic of key meters, the same on every backend (which only reads and writes rows):
 * whether a run's charges fit, and what its reservations settle to.
 */

/** The meter of runs executing now: a gauge, whose reservations are slots and are never "used". */
export const CONCURRENCY_METER = "concurrency";

export interface MeterRow {
  meter: string;
  used: number;
  reserved: number;
}

/** Charges merged by meter (a run may charge one meter twice: both budgets in one call, say). */
export function mergeCharges(charges: readonly MeterCharge[]): MeterCharge[] {
  const merged = new Map<string, MeterCharge>();
  for (const c of charges) {
    const seen = merged.get(c.meter);
    merged.set(c.meter, seen ? { ...seen, amount: seen.amount + c.amount, limit: Math.min(seen.limit, c.limit) } : { ...c });
  }
  return [...merged.values()].sort((a, b) => (a.meter < b.meter ? -1 : a.meter > b.meter ? 1 : 0));
}

/** Whether every charge fits (`used + reserved + amount <= limit`) given the meters' rows. */
export function admit(charges: readonly MeterCharge[], rows: readonly MeterRow[]): Admission {
  const byMeter = new Map(rows.map((r) => [r.meter, r]));
  const before: MeterState[] = charges.map((c) => {
    const row = byMeter.get(c.meter);
    return { meter: c.meter, used: Number(row?.used ?? 0), reserved: Number(row?.reserved ?? 0), limit: c.limit, amount: c.amount };
  });
  const refused = before.find((s) => s.used + s.reserved + s.amount > s.limit);
  if (refused) return { ok: false, refused, states: before };
  return { ok: true, states: before.map((s) => ({ ...s, reserved: s.reserved + s.amount })) };
}

/** What one reservation settles to: its amount leaves `reserved`, the real use joins `used`. */
export function settled(reservation: { meter: string; amount: number }, settle: Settlement): number {
  if (reservation.meter === CONCURRENCY_METER) return 0;
  if (settle === "reserved") return Number(reservation.amount);
  return settle[reservation.meter.split(":")[0]!] ?? 0;
}
