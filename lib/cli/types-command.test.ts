import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { typesModule } from "./types-command";

// `genserve types`' module compiled with tsc (strict), used as a client would use it, and its zod
// schemas run: the types and the schemas describe the same values.

const ROOT = path.resolve(import.meta.dirname, "../..");
// Inside the repository, so that `zod` resolves from its node_modules; removed after.
const dir = mkdtempSync(path.join(ROOT, ".types-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const INVOICE = {
  type: "object",
  properties: {
    number: { type: "string", minLength: 1 },
    total: { type: "number", minimum: 0 },
    currency: { enum: ["EUR", "USD"] },
    paid: { type: ["boolean", "null"] },
    lines: { type: "array", items: { $ref: "#/$defs/line" } },
    "due-date": { type: "string", format: "date" },
    tags: { type: "object", additionalProperties: { type: "integer" } },
  },
  required: ["number", "total", "currency"],
  additionalProperties: false,
  $defs: { line: { type: "object", properties: { description: { type: "string" }, amount: { type: "number" } }, required: ["description"], additionalProperties: false } },
};
const TREE = {
  type: "object",
  properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/node" } } },
  required: ["name"],
  $defs: { node: { type: "object", properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/node" } } }, required: ["name", "children"], additionalProperties: false } },
};
/** $defs names that make the same identifier, and an enum with an object member. */
const ODD = {
  type: "object",
  properties: { a: { $ref: "#/$defs/foo-bar" }, b: { $ref: "#/$defs/foo_bar" }, mixed: { enum: ["x", { y: 1 }] }, fixed: { const: [1, 2] } },
  required: ["a", "b", "mixed"],
  $defs: { "foo-bar": { type: "string" }, foo_bar: { type: "number" } },
};
const CHOICE = { anyOf: [{ type: "object", properties: { kind: { const: "a" }, n: { type: "integer" } }, required: ["kind", "n"] }, { type: "string", enum: ["none"] }] };

const USAGE = `
import type { Workflows } from "./workflows";
import { workflowSchemas } from "./workflows";

/** A client typed by the map, as i-sdk's generic client will be. */
declare function generate<K extends keyof Workflows>(workflow: K, input: Workflows[K]["input"]): Workflows[K]["output"];

const invoice = generate("extract-invoice", "Invoice INV-7");
const total: number = invoice.total;
const currency: "EUR" | "USD" = invoice.currency;
const first: string | undefined = invoice.lines?.[0]?.description;
const paid: boolean | null | undefined = invoice.paid;
const due: string | undefined = invoice["due-date"];
const tag: number | undefined = invoice.tags?.["x"];
// @ts-expect-error: not a currency of the schema
const wrong: Workflows["extract-invoice@2"]["output"] = { number: "1", total: 1, currency: "GBP" };
// @ts-expect-error: additionalProperties false
const extra: Workflows["extract-invoice@production"]["output"] = { number: "1", total: 1, currency: "EUR", more: 1 };
// @ts-expect-error: input is text
generate("extract-invoice@1", 42);
const tree = generate("tree@config", "x");
const depth: string | undefined = tree.children?.[0]?.children[0]?.name;
const choice = generate("choice", "x");
const kind: "a" | "none" = typeof choice === "string" ? choice : choice.kind;
const free: unknown = generate("free@config", "x");
const odd = generate("odd", "x");
const oddA: string = odd.a;
const oddB: number = odd.b;
const mixed: unknown = odd.mixed;
const parsed = workflowSchemas["extract-invoice"].parse({});
const n: string = parsed.number;
export { total, currency, first, paid, due, tag, wrong, extra, depth, kind, free, n, oddA, oddB, mixed };
`;

describe("genserve types", () => {
  const text = typesModule(
    [
      { slug: "extract-invoice", version: "1", description: "Old", schema: { type: "object", properties: { number: { type: "string" } } } },
      { slug: "extract-invoice", version: "2", description: "Extract the fields\nof an invoice", schema: INVOICE },
      { slug: "tree", version: "config", schema: TREE },
      { slug: "choice", version: "3", schema: CHOICE },
      { slug: "free", version: "config" },
      { slug: "odd", version: "1", schema: ODD },
    ],
    [
      { ref: "extract-invoice", slug: "extract-invoice", version: "2" },
      { ref: "extract-invoice@production", slug: "extract-invoice", version: "2" },
      { ref: "choice", slug: "choice", version: "3" },
      { ref: "free", slug: "free", version: "config" },
      { ref: "tree", slug: "tree", version: "config" },
      { ref: "odd", slug: "odd", version: "1" },
    ],
    "2026-11-26T00:00:00.000Z",
  );
  writeFileSync(path.join(dir, "workflows.ts"), text);
  writeFileSync(path.join(dir, "usage.ts"), USAGE);

  it("writes a module that compiles under tsc --strict, typing each reference's output from its version's schema", () => {
    const program = ts.createProgram([path.join(dir, "workflows.ts"), path.join(dir, "usage.ts")], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      skipLibCheck: true,
      noUnusedLocals: false,
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => `${d.file ? path.basename(d.file.fileName) : ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
    expect(diagnostics, text).toEqual([]);
    expect(text).toContain('"extract-invoice@production": { input: string; output: ExtractInvoiceV2Output };');
    expect(text).toContain("// extract-invoice@2 — Extract the fields of an invoice");
  }, 120_000);

  it("has zod schemas that accept what the schema does and refuse what it does not", async () => {
    const { workflowSchemas } = (await import(path.join(dir, "workflows.ts"))) as { workflowSchemas: Record<string, { safeParse(v: unknown): { success: boolean } }> };
    const invoice = workflowSchemas["extract-invoice"]!;
    expect(invoice.safeParse({ number: "INV-7", total: 1, currency: "EUR", paid: null, lines: [{ description: "Chair", amount: 2 }], tags: { a: 1 } }).success).toBe(true);
    expect(invoice.safeParse({ number: "INV-7", total: -1, currency: "EUR" }).success).toBe(false);
    expect(invoice.safeParse({ number: "INV-7", total: 1, currency: "GBP" }).success).toBe(false);
    expect(invoice.safeParse({ number: "INV-7", total: 1, currency: "EUR", other: 1 }).success).toBe(false);
    expect(invoice.safeParse({ number: "INV-7", total: 1, currency: "EUR", tags: { a: 1.5 } }).success).toBe(false);
    const tree = workflowSchemas["tree"]!;
    expect(tree.safeParse({ name: "a", children: [{ name: "b", children: [{ name: "c", children: [] }] }] }).success).toBe(true);
    expect(tree.safeParse({ name: "a", children: [{ name: "b", children: [{ name: "c" }] }] }).success).toBe(false);
    expect(workflowSchemas["choice"]!.safeParse("none").success).toBe(true);
    expect(workflowSchemas["choice"]!.safeParse({ kind: "a", n: 1.5 }).success).toBe(false);
    const odd = workflowSchemas["odd"]!;
    expect(odd.safeParse({ a: "s", b: 1, mixed: { y: 1 }, fixed: [1, 2] }).success).toBe(true);
    expect(odd.safeParse({ a: 1, b: 1, mixed: "x" }).success).toBe(false);
  });
});
