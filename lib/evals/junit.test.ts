import { readFileSync } from "node:fs";
import path from "node:path";
import { validateXML } from "xmllint-wasm";
import { describe, expect, it } from "vitest";
import type { CaseRun, EvaluationReport } from "../api/suite-shapes";
import { junitXml } from "./junit";

const XSD = readFileSync(path.resolve(import.meta.dirname, "../../test/helpers/junit.xsd"), "utf8");

const run = (repeat: number, extra: Partial<CaseRun>): CaseRun => ({
  repeat,
  runId: `run_${repeat}`,
  status: "passed",
  durationMs: 1234,
  cost: "0.001",
  inputTokens: 1,
  outputTokens: 1,
  output: null,
  error: null,
  checks: [],
  ...extra,
});

const REPORT: EvaluationReport = {
  id: "eval_01TEST",
  suite: "invoices",
  suiteVersion: 3,
  status: "cancelled",
  target: { workflowSlug: "extract", model: null, operation: "generate.object", repeat: 2, concurrency: 2, baselineId: null, callback: null },
  totals: { cases: 2, runs: 4, done: 3, passed: 1, failed: 1, errors: 1, passRate: 1 / 3, casesPassed: 0, checks: { passed: 1, failed: 1 }, judged: { passed: 0, failed: 0 }, costUsd: "0.003", inputTokens: 3, outputTokens: 3, durationMsP50: 1234, durationMsP95: 1234 },
  error: null,
  createdAt: "2026-11-24T03:00:00.000Z",
  startedAt: "2026-11-24T03:00:01.000Z",
  finishedAt: "2026-11-24T03:00:09.000Z",
  cases: [
    {
      index: 0,
      name: 'tricky <case> & "quotes"',
      passed: 1,
      passRate: 0.5,
      stable: false,
      fields: [],
      runs: [
        run(0, { checks: [{ path: "/total", check: "approx", pass: true, expected: { approx: 1, tolerance: 0 }, actual: 1 }] }),
        run(1, { status: "failed", checks: [{ path: "/a~1b", check: "equals", pass: false, expected: "x<y", actual: "bell\u0007 & more", reason: 'expected "x<y", got "bell\u0007 & more"' }] }),
      ],
    },
    { index: 1, name: "broken", passed: 0, passRate: 0, stable: true, fields: [], runs: [run(0, { status: "error", runId: "run_e", error: { code: "output_invalid", detail: "The model did not produce valid output." } })] },
  ],
  fields: [],
  baseline: null,
};

describe("JUnit XML", () => {
  it("is valid against the JUnit schema, one testcase per case and repeat, naming each failing field, check and value", async () => {
    const xml = junitXml(REPORT);
    const result = await validateXML({ xml: { fileName: "report.xml", contents: xml }, schema: { fileName: "junit.xsd", contents: XSD } });
    expect(result.errors).toEqual([]);
    expect(result.valid).toBe(true);
    expect(xml).toContain('<testsuite name="invoices" tests="4" failures="1" errors="1" skipped="1" time="3.702" timestamp="2026-11-24T03:00:01.000">');
    expect(xml).toContain('<testcase classname="invoices" name="tricky &lt;case&gt; &amp; &quot;quotes&quot; [repeat 2]" time="1.234">');
    // The control character XML cannot hold is dropped; the rest is escaped.
    expect(xml).toContain('<failure message="/a~1b: equals expected &quot;x&lt;y&quot;, got &quot;bell &amp; more&quot;" type="equals">/a~1b equals: expected &quot;x&lt;y&quot;, got &quot;bell &amp; more&quot;</failure>');
    expect(xml).toContain('<error message="output_invalid: The model did not produce valid output." type="output_invalid"/>');
    expect(xml).toContain('<skipped message="not run: the evaluation cancelled"/>');
    expect(xml.match(/<testcase /g)).toHaveLength(4);
  });

  it("is refused by the schema when it is not JUnit (the check can fail)", async () => {
    const broken = junitXml(REPORT).replace(' time="1.234"', ' time="soon"');
    const result = await validateXML({ xml: { fileName: "report.xml", contents: broken }, schema: { fileName: "junit.xsd", contents: XSD } });
    expect(result.valid).toBe(false);
  });
});
