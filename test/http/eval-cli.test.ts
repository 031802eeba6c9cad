import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { validateXML } from "xmllint-wasm";
import { beforeAll, describe, expect, it } from "vitest";
import { INVOICE_SCHEMA, testConfig } from "../helpers/config";
import { createKey, tempDir, writeConfig } from "../helpers/genserve";
import { useGenserve } from "../helpers/suite";

// `genserve eval` as a CI pipeline runs it: against a running server and in-process on a data
// directory; its exit codes (0 met --min-pass, 1 below, 2 bad suite or setup), the summary, JSON
// and JUnit XML (checked against the JUnit schema).

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const ctx = useGenserve();
let user: { key: string };
let dir: string;

/** Runs the CLI; resolves with its exit code and output (never rejects on a non-zero exit). */
function genserve(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(ROOT, "bin", "genserve.mjs"), ...args], { cwd: dir, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const SUITE = `
suite: cli-invoices
workflow: no-retry
schemaFile: ./schemas/invoice.json
cases:
  - name: with a note attached
    input: "Invoice INV-7"
    attachments: [{ file: ./fixtures/note.txt }]
    expect:
      /number: { equals: "INV-7" }
      /currency: { oneOf: [EUR] }
  - name: dollars
    input: "Invoice INV-8"
    expect:
      /currency: { equals: USD }
`;

beforeAll(async () => {
  user = await createKey("ci", { dataDir: ctx.server.dataDir });
  dir = tempDir("genserve-eval-");
  mkdirSync(path.join(dir, "schemas"));
  mkdirSync(path.join(dir, "fixtures"));
  writeFileSync(path.join(dir, "schemas", "invoice.json"), JSON.stringify(INVOICE_SCHEMA));
  writeFileSync(path.join(dir, "fixtures", "note.txt"), "Paid by card on delivery.");
  writeFileSync(path.join(dir, "invoices.yaml"), SUITE);
});

const answers = (body: { messages: { role: string; content: unknown }[] }) => {
  const text = JSON.stringify(body.messages);
  return { content: JSON.stringify({ number: text.includes("INV-7") ? "INV-7" : "INV-8", total: 1, currency: "EUR" }) };
};

describe("genserve eval against a running server", () => {
  it("exits 1 below --min-pass and 0 at it, prints which case failed on which field, and writes valid JUnit XML", async () => {
    ctx.upstream.respondWith(answers);
    const remote = ["--url", ctx.server.url, "--api-key", user.key];
    const below = await genserve(["eval", "invoices.yaml", ...remote, "--junit", "report.xml"]);
    expect(below.stderr).toContain("pass rate 0.5 is below 1");
    expect(below.code).toBe(1);
    expect(below.stdout).toMatch(/PASS {2}with a note attached/);
    expect(below.stdout).toMatch(/FAIL {2}dollars {2}fields: \/currency/);
    // Under it, as a test runner's assertion diff: the check, expected and actual values, the run.
    expect(below.stdout).toMatch(/FAIL {2}dollars.*\n {4}run run_[0-9A-Z]{26}\n {6}\/currency {2}equals\n {8}expected: "USD"\n {8}actual: {3}"EUR"\n/);
    // The attachment went to the model as the run's document.
    expect(ctx.upstream.requests.some((r) => JSON.stringify(r.body.messages).includes("Paid by card on delivery."))).toBe(true);

    const xml = readFileSync(path.join(dir, "report.xml"), "utf8");
    const checked = await validateXML({ xml: { fileName: "report.xml", contents: xml }, schema: { fileName: "junit.xsd", contents: readFileSync(path.join(ROOT, "test", "helpers", "junit.xsd"), "utf8") } });
    expect(checked.errors).toEqual([]);
    expect(xml).toContain('<failure message="/currency: equals expected &quot;USD&quot;, got &quot;EUR&quot;" type="equals">');

    const met = await genserve(["eval", "invoices.yaml", "--min-pass", "0.5", "--baseline", "latest", "--json"], { GENSERVE_URL: ctx.server.url, GENSERVE_API_KEY: user.key });
    expect(met.code).toBe(0);
    const report = JSON.parse(met.stdout);
    expect(report).toMatchObject({ suite: "cli-invoices", status: "completed", totals: { passRate: 0.5 }, baseline: { newlyFailing: [], newlyPassing: [] } });
  });

  it("exits 2 for a suite that is not valid, naming each problem, and for a setup that cannot run", async () => {
    writeFileSync(path.join(dir, "bad.yaml"), "workflow: no-retry\ncases:\n  - name: a\n    input: x\n    expect:\n      total: { equals: 1 }\n      /n: { matches: '(?<=a)' }\n");
    const bad = await genserve(["eval", "bad.yaml", "--url", ctx.server.url, "--api-key", user.key]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("/cases/0/expect/total: must be a JSON Pointer");
    const unknown = await genserve(["eval", "invoices.yaml", "--url", ctx.server.url, "--api-key", user.key, "--workflow", "nope"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('No workflow "nope" exists.');
    const noKey = await genserve(["eval", "invoices.yaml", "--url", ctx.server.url], { GENSERVE_API_KEY: "" });
    expect(noKey.code).toBe(2);
    expect((await genserve(["eval", "missing.yaml", "--url", ctx.server.url, "--api-key", user.key])).code).toBe(2);
  });
});

describe("genserve eval in-process on a data directory", () => {
  it("runs the suite without a server and exits by its pass rate", async () => {
    ctx.upstream.respondWith(answers);
    const data = path.join(dir, "data");
    const config = writeConfig(dir, testConfig(ctx.upstream.url));
    await createKey("admin", { dataDir: data, admin: true });
    const result = await genserve(["eval", "invoices.yaml", "--data", data, "--config", config, "--min-pass", "0.5", "--json"], { GENSERVE_URL: "" });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: "completed", totals: { done: 2, passed: 1 } });
  }, 60_000);
});
