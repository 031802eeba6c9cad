/**
 * bench:grounding — precision and recall of source grounding (lib/grounding/) on a labelled set
 * the project builds itself (bench/grounding-set.ts): documents from templates in four formats,
 * read by the same extraction as attachments (worker threads: HTML, PDF page by page, DOCX), the
 * truth's offsets found again in the extracted text. A perfect model's object (with planted
 * absent values) is aligned; a value counts as found when its match overlaps the truth's span.
 * The tuning split (seed 1: invoices, contracts, forms) and the held-out split (seed 2, and a
 * template family never tuned on: emails) are reported separately, then time per KB on long
 * documents. Usage: npm run bench:grounding [-- --docs 200]
 */
import os from "node:os";
import path from "node:path";
import { DocumentExtractor } from "../lib/attachments/extract";
import { DEFAULT_LIMITS } from "../lib/config/schema";
import { alignObject } from "../lib/grounding/align";
import type { GroundedLeaf, SourceDocument } from "../lib/grounding/grounding-types";
import { docxBody, makeDocx, makePdfPages } from "../test/helpers/documents";
import { buildSet, type Family, type LabelledDocument } from "./grounding-set";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const DOCS = arg("docs", 200);
const BUDGET = { timeMs: DEFAULT_LIMITS.groundingTimeoutMs, work: DEFAULT_LIMITS.groundingWork };
const extractor = new DocumentExtractor(path.join(process.cwd(), "lib", "attachments", "extract-worker.mjs"), DEFAULT_LIMITS);

const escapeXml = (t: string) => t.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** The document's text as an attachment of its format yields it. */
async function extracted(doc: LabelledDocument): Promise<string> {
  switch (doc.format) {
    case "text":
      return doc.lines.join("\n");
    case "html":
      return extractor.text("html", Buffer.from(`<html><body>${doc.lines.map((l) => `<p>${escapeXml(l)}</p>`).join("")}</body></html>`), 0);
    case "docx":
      return extractor.text("docx", await makeDocx(docxBody(doc.lines.map((l) => `<w:p><w:r><w:t xml:space="preserve">${escapeXml(l)}</w:t></w:r></w:p>`).join(""))), 0);
    case "pdf": {
      const pages: string[][] = [];
      for (let i = 0; i < doc.lines.length; i += 40) pages.push(doc.lines.slice(i, i + 40));
      return extractor.text("pdf", makePdfPages(pages), 0);
    }
  }
}

/** Each line's offset in the extracted text (null when extraction changed it), found in order. */
function lineOffsets(text: string, lines: readonly string[]): (number | null)[] {
  let from = 0;
  return lines.map((line) => {
    const at = text.indexOf(line, from);
    if (at < 0) return null;
    from = at + line.length;
    return at;
  });
}

interface Tally {
  present: number;
  found: number;
  predicted: number;
  wrongPlace: number;
  absent: number;
  absentNone: number;
  unresolved: number;
  kinds: Record<string, number>;
  bytes: number;
  ms: number;
  byFormat: Record<string, { present: number; found: number }>;
  misses: string[];
}

const newTally = (): Tally => ({ present: 0, found: 0, predicted: 0, wrongPlace: 0, absent: 0, absentNone: 0, unresolved: 0, kinds: {}, bytes: 0, ms: 0, byFormat: {}, misses: [] });

async function evaluate(docs: readonly LabelledDocument[]): Promise<Tally> {
  const t = newTally();
  for (const doc of docs) {
    const text = await extracted(doc);
    const offsets = lineOffsets(text, doc.lines);
    const sources: SourceDocument[] = [
      { source: "input", text: "Extract the fields of the attached document." },
      { source: { attachment: 0 }, text, ...(doc.format === "pdf" && { pdf: true }) },
    ];
    const started = process.hrtime.bigint();
    const leaves = alignObject(doc.object, sources, BUDGET);
    t.ms += Number(process.hrtime.bigint() - started) / 1e6;
    t.bytes += Buffer.byteLength(text);
    const byPointer = new Map<string, GroundedLeaf>(leaves.map((l) => [l.pointer, l]));
    const format = (t.byFormat[doc.format] ??= { present: 0, found: 0 });
    for (const truth of doc.truth) {
      const leaf = byPointer.get(truth.pointer)!;
      t.kinds[leaf.match] = (t.kinds[leaf.match] ?? 0) + 1;
      if (truth.at === null) {
        t.absent++;
        if (leaf.match === "none") t.absentNone++;
        else {
          t.predicted++;
          t.misses.push(`${doc.id} ${truth.pointer}: absent but ${leaf.match} "${leaf.text}"`);
        }
        continue;
      }
      const lineAt = offsets[truth.at.line];
      if (lineAt === null || lineAt === undefined) {
        t.unresolved++;
        continue;
      }
      const start = lineAt + truth.at.column;
      const end = start + truth.at.written.length;
      t.present++;
      format.present++;
      if (leaf.match === "none") {
        t.misses.push(`${doc.id} ${truth.pointer}: none (${leaf.reason}) for "${truth.at.written}"`);
        continue;
      }
      t.predicted++;
      const right = typeof leaf.source === "object" && leaf.start! < end && leaf.end! > start;
      if (right) {
        t.found++;
        format.found++;
      } else {
        t.wrongPlace++;
        t.misses.push(`${doc.id} ${truth.pointer}: ${leaf.match} at "${leaf.text}" instead of "${truth.at.written}"`);
      }
    }
  }
  return t;
}

function report(name: string, t: Tally) {
  const precision = t.found / Math.max(1, t.predicted);
  const recall = t.found / Math.max(1, t.present);
  console.log(`\n## ${name}`);
  console.log(`values present ${t.present}, found at the right place ${t.found}, matched elsewhere ${t.wrongPlace}; truth not located after extraction ${t.unresolved}`);
  console.log(`precision ${precision.toFixed(4)}  recall ${recall.toFixed(4)}  (targets 0.98 / 0.95)`);
  console.log(`absent values reported none: ${t.absentNone}/${t.absent}`);
  console.log(`matches: ${Object.entries(t.kinds).map(([k, v]) => `${k} ${v}`).join(", ")}`);
  console.log(`recall by format: ${Object.entries(t.byFormat).map(([f, v]) => `${f} ${(v.found / Math.max(1, v.present)).toFixed(3)}`).join(", ")}`);
  console.log(`alignment: ${(t.ms / (t.bytes / 1024)).toFixed(3)} ms per KB (${(t.bytes / 1024).toFixed(0)} KB in ${t.ms.toFixed(0)} ms)`);
  if (t.misses.length > 0) console.log(`misses (first 12):\n  ${t.misses.slice(0, 12).join("\n  ")}`);
  return { precision, recall };
}

const TUNING: Family[] = ["invoice", "contract", "form"];
console.log(`bench:grounding — ${new Date().toISOString()}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, load ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}, node ${process.version}`);
const tuning = report(`tuning split (seed 1: ${TUNING.join(", ")}; ${DOCS} documents)`, await evaluate(buildSet(1, TUNING, DOCS)));
const held = report(`held-out split (seed 2: invoice, contract, form and email — a family never tuned on; ${DOCS} documents)`, await evaluate(buildSet(2, [...TUNING, "email"], DOCS)));
const long = await evaluate(buildSet(3, ["contract"], 8, { filler: 3000 }));
report("long documents (contracts with 3,000 filler clauses of numbers and dates, about 215 KB of text each)", long);
await extractor.close();
const pass = (s: { precision: number; recall: number }) => s.precision >= 0.98 && s.recall >= 0.95;
console.log(`\ntargets met: tuning ${pass(tuning) ? "yes" : "NO"}, held out ${pass(held) ? "yes" : "NO"}`);
