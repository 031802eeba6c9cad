/** The usage report: the records of `Store["usage"]`. */

import "server-only";

/** GET /api/v1/usage: finished runs created in [from, to), of one key (or all: null). */
export interface UsageQuery {
  from: string;
  to: string;
  keyId: string | null;
  /** Only runs of this project's keys (null: every project's). */
  projectId: string | null;
  groupBy: "workflow" | "model" | "key";
  bucket: "hour" | "day";
}

export interface UsageReport {
  from: string;
  to: string;
  groupBy: UsageQuery["groupBy"];
  bucket: UsageQuery["bucket"];
  groups: {
    group: string;
    runs: number;
    errors: number;
    inputTokens: number;
    outputTokens: number;
    costUsd: string;
    durationMsP50: number | null;
    durationMsP95: number | null;
  }[];
  series: { at: string; runs: number; errors: number; costUsd: string }[];
}
