import "server-only";
import type { BaselineDiff, CaseResult, CaseRun, CheckResult, EvaluationReport, EvaluationTarget, EvaluationTotals, SuiteDocument } from "../api/suite-shapes";
import { jsonEqual } from "../json/json-equal.mjs";
import type { EvaluationItemRecord, EvaluationRecord } from "../store/store-types";
import { lookup } from "./expect";

/**
 * What an evaluation reports, computed from its stored case results: totals, each case over its
 * repeats (stability), each field over every case, and the differences from a baseline.
 */

/** Dollar amounts are summed exactly, as integers of 10^-18 dollars. */
const SCALE = 18;
function usdUnits(usd: string): bigint {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(usd);
  if (!match) return 0n;
  const units = BigInt(match[2]!) * 10n ** BigInt(SCALE) + BigInt((match[3] ?? "").slice(0, SCALE).padEnd(SCALE, "0") || "0");
  return match[1] ? -units : units;
}
function formatUsd(units: bigint): string {
  const sign = units < 0n ? "-" : "";
  const abs = units < 0n ? -units : units;
  const whole = abs / 10n ** BigInt(SCALE);
  const fraction = (abs % 10n ** BigInt(SCALE)).toString().padStart(SCALE, "0").replace(/0+$/, "");
  return `${sign}${whole}${fraction ? `.${fraction}` : ""}`;
}

/** Decimal dollar amounts summed exactly. */
export const sumUsd = (amounts: readonly string[]): string => formatUsd(amounts.reduce((total, amount) => total + usdUnits(amount), 0n));

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const rate = (passed: number, decided: number) => (decided === 0 ? null : passed / decided);

export function caseRunOf(item: EvaluationItemRecord): CaseRun {
  return {
    repeat: item.repeat,
    runId: item.runId,
    status: item.status,
    durationMs: item.durationMs,
    cost: item.cost,
    inputTokens: item.inputTokens,
    outputTokens: item.outputTokens,
    output: item.output,
    error: item.error && { code: item.error.code, detail: item.error.detail },
    checks: item.checks as CheckResult[],
  };
}

/** A field's verdict in one run: every check on it held (a failed run fails every field). */
function fieldVerdict(run: CaseRun, path: string): boolean {
  if (run.status === "error") return false;
  return run.checks.every((c) => c.path !== path || c.pass);
}

export function totalsOf(document: SuiteDocument, target: EvaluationTarget, items: readonly EvaluationItemRecord[]): EvaluationTotals {
  const checks = { passed: 0, failed: 0 };
  const judged = { passed: 0, failed: 0 };
  let cost = 0n;
  const totals = { passed: 0, failed: 0, errors: 0, inputTokens: 0, outputTokens: 0 };
  const durations: number[] = [];
  const byCase = new Map<number, boolean>();
  for (const item of items) {
    if (item.status === "passed") totals.passed++;
    else if (item.status === "failed") totals.failed++;
    else totals.errors++;
    byCase.set(item.caseIndex, (byCase.get(item.caseIndex) ?? true) && item.status === "passed");
    for (const check of item.checks as CheckResult[]) {
      const tally = check.check === "judge" ? judged : checks;
      if (check.pass) tally.passed++;
      else tally.failed++;
    }
    cost += usdUnits(item.cost);
    totals.inputTokens += item.inputTokens;
    totals.outputTokens += item.outputTokens;
    if (item.durationMs !== null) durations.push(item.durationMs);
  }
  durations.sort((a, b) => a - b);
  const runs = document.cases.length * target.repeat;
  // A case passes when all its repeats ran and passed.
  const perCase = new Map<number, number>();
  for (const item of items) perCase.set(item.caseIndex, (perCase.get(item.caseIndex) ?? 0) + 1);
  const casesPassed = [...byCase].filter(([index, passed]) => passed && perCase.get(index) === target.repeat).length;
  return {
    cases: document.cases.length,
    runs,
    done: items.length,
    passed: totals.passed,
    failed: totals.failed,
    errors: totals.errors,
    passRate: rate(totals.passed, items.length),
    casesPassed,
    checks,
    judged,
    costUsd: formatUsd(cost),
    inputTokens: totals.inputTokens,
    outputTokens: totals.outputTokens,
    durationMsP50: percentile(durations, 50),
    durationMsP95: percentile(durations, 95),
  };
}

/** The full report of an evaluation from its record, the suite it ran and its case results (without the baseline). */
export function reportOf(evaluation: EvaluationRecord, document: SuiteDocument, items: readonly EvaluationItemRecord[]): Omit<EvaluationReport, "baseline"> {
  const target = evaluation.target as EvaluationTarget;
  const runsByCase = new Map<number, CaseRun[]>();
  for (const item of items) runsByCase.set(item.caseIndex, [...(runsByCase.get(item.caseIndex) ?? []), caseRunOf(item)]);
  const allFields = new Map<string, { checks: number; passed: number; verdicts: Set<boolean> }>();
  const cases: CaseResult[] = document.cases.map((c, index) => {
    const runs = (runsByCase.get(index) ?? []).sort((a, b) => a.repeat - b.repeat);
    const passed = runs.filter((r) => r.status === "passed").length;
    const fields = Object.keys(c.expect ?? {}).map((path) => {
      const verdicts = runs.map((r) => fieldVerdict(r, path));
      const fieldPassed = verdicts.filter(Boolean).length;
      const total = allFields.get(path) ?? { checks: 0, passed: 0, verdicts: new Set<boolean>() };
      total.checks += verdicts.length;
      total.passed += fieldPassed;
      for (const v of verdicts) total.verdicts.add(v);
      allFields.set(path, total);
      return { path, checks: verdicts.length, passed: fieldPassed, passRate: rate(fieldPassed, verdicts.length), stable: new Set(verdicts).size <= 1 };
    });
    return { index, name: c.name, runs, passed, passRate: rate(passed, runs.length), stable: new Set(runs.map((r) => r.status === "passed")).size <= 1, fields };
  });
  return {
    id: evaluation.id,
    suite: evaluation.suiteSlug,
    suiteVersion: evaluation.suiteVersion,
    status: evaluation.status,
    target,
    totals: totalsOf(document, target, items),
    error: evaluation.error && { code: evaluation.error.code, detail: evaluation.error.detail },
    createdAt: evaluation.createdAt,
    startedAt: evaluation.startedAt,
    finishedAt: evaluation.finishedAt,
    cases,
    fields: [...allFields].map(([path, f]) => ({ path, checks: f.checks, passed: f.passed, passRate: rate(f.passed, f.checks), stable: f.verdicts.size <= 1 })),
  };
}

const MAX_CHANGED = 500;

/** What changed from the baseline to this evaluation, case by case (matched by name). */
export function compareWithBaseline(current: Omit<EvaluationReport, "baseline">, baseline: Omit<EvaluationReport, "baseline">): BaselineDiff {
  const before = new Map(baseline.cases.map((c) => [c.name, c]));
  const casePassed = (c: CaseResult) => c.runs.length > 0 && c.runs.every((r) => r.status === "passed");
  const newlyFailing: BaselineDiff["newlyFailing"] = [];
  const newlyPassing: string[] = [];
  const changed: BaselineDiff["changed"] = [];
  for (const now of current.cases) {
    const then = before.get(now.name);
    if (!then || now.runs.length === 0 || then.runs.length === 0) continue;
    if (casePassed(then) && !casePassed(now)) newlyFailing.push({ case: now.name, paths: now.fields.filter((f) => f.passRate !== 1).map((f) => f.path) });
    if (!casePassed(then) && casePassed(now)) newlyPassing.push(now.name);
    const [a, b] = [then.runs[0]!, now.runs[0]!];
    for (const { path } of now.fields) {
      if (changed.length >= MAX_CHANGED) break;
      const x = lookup(a.output, path);
      const y = lookup(b.output, path);
      if (x.found === y.found && (!x.found || jsonEqual(x.value, (y as { value: unknown }).value))) continue;
      changed.push({ case: now.name, path, ...(x.found && { before: x.value }), ...(y.found && { after: y.value }) });
    }
  }
  const delta = (a: number | null, b: number | null) => (a === null || b === null ? null : a - b);
  return {
    id: baseline.id,
    newlyFailing,
    newlyPassing,
    changed,
    passRateDelta: delta(current.totals.passRate, baseline.totals.passRate),
    costDeltaUsd: formatUsd(usdUnits(current.totals.costUsd) - usdUnits(baseline.totals.costUsd)),
    durationMsP50Delta: delta(current.totals.durationMsP50, baseline.totals.durationMsP50),
  };
}
