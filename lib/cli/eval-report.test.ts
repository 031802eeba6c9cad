import { describe, expect, it } from "vitest";
import type { CaseRun, EvaluationReport } from "../api/suite-shapes";
import { reportText, showValue } from "./eval-report";

const run = (extra: Partial<CaseRun>): CaseRun => ({
  repeat: 0,
  runId: "run_01AAAAAAAAAAAAAAAAAAAAAAAA",
  status: "passed",
  durationMs: 10,
  cost: "0",
  inputTokens: 1,
  outputTokens: 1,
  output: null,
  error: null,
  checks: [],
  ...extra,
});

function report(cases: EvaluationReport["cases"], repeat = 1): EvaluationReport {
  return {
    id: "eval_01",
    suite: "invoices",
    suiteVersion: 2,
    status: "completed",
    target: { workflowSlug: "extract-invoice", model: null, operation: "generate.object", repeat, concurrency: 1, baselineId: null, callback: null },
    totals: { cases: cases.length, runs: 2, done: 2, passed: 1, failed: 1, errors: 0, passRate: 0.5, casesPassed: 1, checks: { passed: 1, failed: 1 }, judged: { passed: 0, failed: 0 }, costUsd: "0", inputTokens: 2, outputTokens: 2, durationMsP50: 10, durationMsP95: 10 },
    error: null,
    createdAt: "2026-11-26T00:00:00Z",
    startedAt: null,
    finishedAt: null,
    cases,
    fields: [],
    baseline: null,
  };
}

describe("genserve eval's report", () => {
  it("prints each failing check like an assertion diff: field, expectation, expected, actual, run", () => {
    const text = reportText(
      report([
        { index: 0, name: "euros", runs: [run({ checks: [{ path: "/currency", check: "equals", pass: true, expected: "EUR", actual: "EUR" }] })], passed: 1, passRate: 1, stable: true, fields: [{ path: "/currency", checks: 1, passed: 1, passRate: 1, stable: true }] },
        {
          index: 1,
          name: "dollars",
          runs: [
            run({
              runId: "run_01BBBBBBBBBBBBBBBBBBBBBBBB",
              status: "failed",
              checks: [
                { path: "/currency", check: "equals", pass: false, expected: "USD", actual: "EUR" },
                { path: "/total", check: "approx", pass: true, expected: 12, actual: 12 },
                { path: "/note", check: "present", pass: false },
                { path: "/summary", check: "judge", pass: false, actual: "short", reason: "It does not mention the due date." },
              ],
            }),
          ],
          passed: 0,
          passRate: 0,
          stable: true,
          fields: [{ path: "/currency", checks: 1, passed: 0, passRate: 0, stable: true }],
        },
      ]),
    );
    expect(text).toContain("  PASS  euros\n");
    expect(text).toContain(
      [
        "  FAIL  dollars  fields: /currency",
        "    run run_01BBBBBBBBBBBBBBBBBBBBBBBB",
        "      /currency  equals",
        '        expected: "USD"',
        '        actual:   "EUR"',
        "      /note  present",
        "        actual:   (missing)",
        "      /summary  judge",
        '        actual:   "short"',
        "        reason:   It does not mention the due date.",
        "passed 1/2 runs",
      ].join("\n"),
    );
    // Checks that passed are not repeated under the failure.
    expect(text).not.toContain("/total  approx");
  });

  it("names the repeat and the error of a run that failed, and shows at most three failing runs of a case", () => {
    const runs = [0, 1, 2, 3, 4].map((repeat) => run({ repeat, runId: `run_${repeat}`, status: "error", error: { code: "output_invalid", detail: "The model did not produce valid output." } }));
    const text = reportText(report([{ index: 0, name: "flaky", runs, passed: 0, passRate: 0, stable: true, fields: [] }], 5));
    expect(text).toContain("    run run_0 (repeat 1)\n      error output_invalid: The model did not produce valid output.");
    expect(text).toContain("run run_2 (repeat 3)");
    expect(text).not.toContain("run run_3");
    expect(text).toContain("… and 2 more failing runs");
  });

  it("cuts long values at 200 characters as JSON, saying how much is left out", () => {
    expect(showValue({ a: 1 })).toBe('{"a":1}');
    expect(showValue(undefined)).toBe("(missing)");
    expect(showValue(null)).toBe("null");
    const long = showValue("x".repeat(500));
    expect(long.startsWith(`"${"x".repeat(199)}…`)).toBe(true);
    expect(long).toContain("(302 more characters)");
  });
});
