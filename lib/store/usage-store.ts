import "server-only";
import { run, type StoreRunner } from "./runner";
import { usageReport, usageStatements } from "./usage-report";
import type { Store } from "./store-types";

/** The usage report and the sweep of idle meters, written once for both backends. */
export function usageStore(db: StoreRunner): Store["usage"] {
  const { decimal, startsWith } = db.dialect;
  return {
    async report(q) {
      const sql = usageStatements(q, { param: (n) => `$${n}`, cost: `CAST(cost AS ${decimal})` });
      const [totals, percentiles, series] = await Promise.all([db.all(sql.totals, sql.params), db.all(sql.percentiles, sql.params), db.all(sql.series, sql.params)]);
      return usageReport(q, { totals: totals as never, percentiles: percentiles as never, series: series as never });
    },
    async sweep(rules) {
      await db.transact(function* () {
        for (const rule of rules) yield* run(`DELETE FROM key_usage WHERE reserved = 0 AND ${startsWith("meter", "$1")} AND updated_at < $2`, [rule.prefix, rule.before]);
      });
    },
  };
}
