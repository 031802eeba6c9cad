import "server-only";
import type { UsageQuery, UsageReport } from "./store-types";

/** The SQL of the usage report, for either backend: placeholders and the decimal cast differ. */
export interface UsageDialect {
  /** The n-th (1-based) placeholder. */
  param(n: number): string;
  /** `cost` (a decimal string) as a number that sums. */
  cost: string;
}

const GROUP_COLUMN: Record<UsageQuery["groupBy"], string> = {
  workflow: "workflow_slug",
  model: "COALESCE(model_name, '')",
  key: "key_id",
};

/**
 * Three statements over finished runs created in [from, to): totals per group, nearest-rank p50 and
 * p95 of duration per group (window functions, the same in SQLite and PostgreSQL), and runs and
 * cost per hour or day for a chart.
 */
export function usageStatements(q: UsageQuery, d: UsageDialect): { totals: string; percentiles: string; series: string; params: unknown[] } {
  const params: unknown[] = [q.from, q.to];
  let where = `created_at >= ${d.param(1)} AND created_at < ${d.param(2)} AND status IN ('succeeded', 'failed', 'cancelled')`;
  if (q.keyId !== null) {
    params.push(q.keyId);
    where += ` AND key_id = ${d.param(params.length)}`;
  }
  if (q.projectId !== null) {
    params.push(q.projectId);
    where += ` AND key_id IN (SELECT id FROM api_keys WHERE project_id = ${d.param(params.length)})`;
  }
  const group = GROUP_COLUMN[q.groupBy];
  const bucketChars = q.bucket === "hour" ? 13 : 10;
  return {
    params,
    totals: `SELECT ${group} AS g, COUNT(*) AS runs, SUM(CASE WHEN status <> 'succeeded' THEN 1 ELSE 0 END) AS errors,
               SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens, SUM(${d.cost}) AS cost
             FROM runs WHERE ${where} GROUP BY ${group} ORDER BY cost DESC, runs DESC`,
    percentiles: `SELECT g, MIN(CASE WHEN rn * 100 >= n * 50 THEN duration_ms END) AS p50, MIN(CASE WHEN rn * 100 >= n * 95 THEN duration_ms END) AS p95
                  FROM (SELECT ${group} AS g, duration_ms, ROW_NUMBER() OVER (PARTITION BY ${group} ORDER BY duration_ms) AS rn, COUNT(*) OVER (PARTITION BY ${group}) AS n
                        FROM runs WHERE ${where} AND duration_ms IS NOT NULL) ranked
                  GROUP BY g`,
    series: `SELECT substr(created_at, 1, ${bucketChars}) AS bucket, COUNT(*) AS runs, SUM(CASE WHEN status <> 'succeeded' THEN 1 ELSE 0 END) AS errors, SUM(${d.cost}) AS cost
             FROM runs WHERE ${where} GROUP BY substr(created_at, 1, ${bucketChars}) ORDER BY bucket`,
  };
}

interface TotalsRow {
  g: string;
  runs: number | string;
  errors: number | string;
  input_tokens: number | string | null;
  output_tokens: number | string | null;
  cost: number | string | null;
}

/** Dollars to nine decimals, as the API writes costs. */
const usd = (value: number | string | null): string => {
  const n = Number(value ?? 0);
  return n.toFixed(9).replace(/\.?0+$/, "") || "0";
};

export function usageReport(
  q: UsageQuery,
  rows: { totals: TotalsRow[]; percentiles: { g: string; p50: number | string | null; p95: number | string | null }[]; series: { bucket: string; runs: number | string; errors: number | string; cost: number | string | null }[] },
): UsageReport {
  const pct = new Map(rows.percentiles.map((p) => [p.g, p]));
  const bucketSuffix = q.bucket === "hour" ? ":00:00.000Z" : "T00:00:00.000Z";
  return {
    from: q.from,
    to: q.to,
    groupBy: q.groupBy,
    bucket: q.bucket,
    groups: rows.totals.map((t) => ({
      group: t.g,
      runs: Number(t.runs),
      errors: Number(t.errors),
      inputTokens: Number(t.input_tokens ?? 0),
      outputTokens: Number(t.output_tokens ?? 0),
      costUsd: usd(t.cost),
      durationMsP50: pct.get(t.g)?.p50 == null ? null : Number(pct.get(t.g)!.p50),
      durationMsP95: pct.get(t.g)?.p95 == null ? null : Number(pct.get(t.g)!.p95),
    })),
    series: rows.series.map((s) => ({ at: `${s.bucket}${bucketSuffix}`, runs: Number(s.runs), errors: Number(s.errors), costUsd: usd(s.cost) })),
  };
}
