import "server-only";
import type { EvaluationReport } from "../api/suite-shapes";

/**
 * An evaluation as JUnit XML, the report format every CI reads: one testsuite per evaluation, one
 * testcase per case and repeat; a failure names each failing field, its check, the expected and
 * the actual value; a run that failed is an error with its code.
 */

const escapeXml = (text: string): string =>
  // Characters XML 1.0 cannot hold at all are dropped; the five special ones escaped.
  text
    .replace(/[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");

const seconds = (ms: number | null) => ((ms ?? 0) / 1000).toFixed(3);
const show = (value: unknown) => (value === undefined ? "(missing)" : JSON.stringify(value));

export function junitXml(report: EvaluationReport): string {
  const runs = report.cases.flatMap((c) => c.runs.map((run) => ({ c, run })));
  const failures = runs.filter(({ run }) => run.status === "failed").length;
  const errors = runs.filter(({ run }) => run.status === "error").length;
  // Cases that never ran (a cancelled or failed evaluation) are reported as skipped.
  const missing = report.cases.flatMap((c) => Array.from({ length: report.target.repeat }, (_, repeat) => repeat).filter((repeat) => !c.runs.some((r) => r.repeat === repeat)).map((repeat) => ({ c, repeat })));
  const time = seconds(runs.reduce((total, { run }) => total + (run.durationMs ?? 0), 0));
  const name = (caseName: string, repeat: number) => escapeXml(report.target.repeat > 1 ? `${caseName} [repeat ${repeat + 1}]` : caseName);
  const suite = escapeXml(report.suite);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="genserve" tests="${runs.length + missing.length}" failures="${failures}" errors="${errors}" time="${time}">`,
    `  <testsuite name="${suite}" tests="${runs.length + missing.length}" failures="${failures}" errors="${errors}" skipped="${missing.length}" time="${time}" timestamp="${(report.startedAt ?? report.createdAt).replace(/Z$/, "")}">`,
    "    <properties>",
    ...[
      ["evaluation", report.id],
      ["status", report.status],
      ["workflow", report.target.workflowSlug],
      ["model", report.target.model ?? "(the workflow's)"],
      ["passRate", report.totals.passRate === null ? "" : String(report.totals.passRate)],
      ["costUsd", report.totals.costUsd],
    ].map(([k, v]) => `      <property name="${k}" value="${escapeXml(v!)}"/>`),
    "    </properties>",
  ];
  for (const { c, run } of runs) {
    lines.push(`    <testcase classname="${suite}" name="${name(c.name, run.repeat)}" time="${seconds(run.durationMs)}">`);
    if (run.status === "failed") {
      const failing = run.checks.filter((check) => !check.pass);
      const first = failing[0];
      const message = first ? `${first.path || "(output)"}: ${first.check} ${first.reason ?? ""}`.trim() : "failed";
      const detail = failing.map((check) => `${check.path || "(output)"} ${check.check}: ${check.reason ?? `expected ${show(check.expected)}, got ${show(check.actual)}`}`).join("\n");
      lines.push(`      <failure message="${escapeXml(message)}" type="${escapeXml(first?.check ?? "expectation")}">${escapeXml(detail)}</failure>`);
    } else if (run.status === "error") {
      lines.push(`      <error message="${escapeXml(`${run.error?.code ?? "error"}: ${run.error?.detail ?? ""}`)}" type="${escapeXml(run.error?.code ?? "error")}"/>`);
    }
    if (run.runId) lines.push(`      <system-out>${escapeXml(`run ${run.runId}`)}</system-out>`);
    lines.push("    </testcase>");
  }
  for (const { c, repeat } of missing) {
    lines.push(`    <testcase classname="${suite}" name="${name(c.name, repeat)}" time="0.000">`, `      <skipped message="not run: the evaluation ${escapeXml(report.status)}"/>`, "    </testcase>");
  }
  lines.push("  </testsuite>", "</testsuites>", "");
  return lines.join("\n");
}
