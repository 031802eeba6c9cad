import "server-only";
import type { CaseResult, CheckResult, EvaluationReport } from "../api/suite-shapes";

/**
 * `genserve eval`'s report on a terminal or in a CI log: a line per case, and under a failing case
 * what a test runner prints for a failed assertion — each failing check's field, expectation,
 * expected and actual values (as JSON, cut at `VALUE_CHARS`) and the run to open — so a failure
 * in CI can be understood without opening the playground.
 */

/** How much of a value is printed: enough to see a difference, not a whole document. */
export const VALUE_CHARS = 200;
/** Failing runs shown per case (a case repeated 10 times that always fails says it once per run otherwise). */
const RUNS_SHOWN = 3;

/** A value as JSON on one line, cut at `max` characters with how much was left out. */
export function showValue(value: unknown, max = VALUE_CHARS): string {
  if (value === undefined) return "(missing)";
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/** The lines of one failing check, indented under its case. */
function checkLines(check: CheckResult): string[] {
  const lines = [`      ${check.path || "(output)"}  ${check.check}`];
  // `present`, `absent` and `judge` have nothing expected to show but what their name says.
  if (check.expected !== undefined) lines.push(`        expected: ${showValue(check.expected)}`);
  lines.push(`        actual:   ${showValue(check.actual)}`);
  if (check.reason) lines.push(`        reason:   ${check.reason.length > VALUE_CHARS ? `${check.reason.slice(0, VALUE_CHARS)}…` : check.reason}`);
  return lines;
}

/** What went wrong in a case's runs: each failing check, or the run's error, and the run's id. */
export function failureLines(c: CaseResult, repeats: number): string[] {
  const failing = c.runs.filter((r) => r.status !== "passed");
  const lines: string[] = [];
  for (const run of failing.slice(0, RUNS_SHOWN)) {
    const which = repeats > 1 ? ` (repeat ${run.repeat + 1})` : "";
    lines.push(`    run ${run.runId ?? "(not started)"}${which}`);
    if (run.error) lines.push(`      error ${run.error.code}: ${run.error.detail.length > VALUE_CHARS ? `${run.error.detail.slice(0, VALUE_CHARS)}…` : run.error.detail}`);
    for (const check of run.checks) if (!check.pass) lines.push(...checkLines(check));
  }
  if (failing.length > RUNS_SHOWN) lines.push(`    … and ${failing.length - RUNS_SHOWN} more failing runs (--json or the report has them all)`);
  return lines;
}

/** The report as text: a line per case, failures in detail, then the totals. */
export function reportText(report: EvaluationReport): string {
  const pct = (rate: number | null) => (rate === null ? "-" : `${Math.round(rate * 1000) / 10}%`);
  const lines = [`evaluation ${report.id}: ${report.suite} v${report.suiteVersion} on ${report.target.workflowSlug}${report.target.model ? ` (model ${report.target.model})` : ""} — ${report.status}`];
  for (const c of report.cases) {
    const failing = c.fields.filter((f) => f.passRate !== 1).map((f) => f.path || "(output)");
    const errored = c.runs.find((r) => r.error)?.error;
    const verdict = c.passRate === 1 ? "PASS" : c.runs.length === 0 ? "SKIP" : "FAIL";
    lines.push(`  ${verdict}  ${c.name}${report.target.repeat > 1 ? `  ${c.passed}/${c.runs.length}${c.stable ? "" : " (unstable)"}` : ""}${failing.length ? `  fields: ${failing.join(", ")}` : ""}${errored ? `  ${errored.code}` : ""}`);
    if (verdict === "FAIL") lines.push(...failureLines(c, report.target.repeat));
  }
  const t = report.totals;
  lines.push(`passed ${t.passed}/${t.done} runs (${pct(t.passRate)}), ${t.casesPassed}/${t.cases} cases; judged ${t.judged.passed}/${t.judged.passed + t.judged.failed}; cost $${t.costUsd}; p50 ${t.durationMsP50 ?? "-"} ms, p95 ${t.durationMsP95 ?? "-"} ms`);
  if (report.baseline) {
    const b = report.baseline;
    lines.push(`against ${b.id}: ${b.newlyFailing.length} newly failing${b.newlyFailing.length ? ` (${b.newlyFailing.map((c) => c.case).join(", ")})` : ""}, ${b.newlyPassing.length} newly passing, ${b.changed.length} fields changed`);
  }
  return `${lines.join("\n")}\n`;
}
