/**
 * The table editor's view of a suite document: cases as rows, each expectation check as a row of
 * (JSON Pointer, kind, expected value). The parsed document stays the one source of truth — rows are
 * read from it and written back into it, keeping every field the table does not show (contexts,
 * attachments, history, and modifiers such as `partial` or `tolerance`).
 */
import { CHECK_KINDS, type CheckKind } from "@/lib/api/suite-shapes";

export type Json = unknown;
export type SuiteDoc = Record<string, Json> & { cases: CaseDoc[] };
export type CaseDoc = Record<string, Json> & { name?: Json; input?: Json; expect?: Record<string, Record<string, Json>> };

/** One check of one field, and the modifiers that go with it (partial/unordered for equals, tolerance for approx). */
export interface CheckRow {
  path: string;
  kind: CheckKind;
  value: Json;
  extra: Record<string, Json>;
}

const MODIFIERS: Partial<Record<CheckKind, string[]>> = { equals: ["partial", "unordered"], approx: ["tolerance"] };
/** Kinds that hold no value: `true` is all they can be. */
export const FLAG_KINDS: readonly CheckKind[] = ["absent", "present"];
/** Kinds whose value is text (a regular expression, a criterion in words), not JSON. */
const TEXT_KINDS: readonly CheckKind[] = ["matches", "judge"];

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** The document as the table can edit it, or why not (shown when switching from the text view). */
export function asSuiteDoc(text: string): { ok: true; doc: SuiteDoc } | { ok: false; reason: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { ok: false, reason: `The document is not valid JSON (${(e as Error).message}). Fix it in the text view first.` };
  }
  if (!isObject(parsed)) return { ok: false, reason: "The document must be a JSON object with a `cases` list." };
  if (!Array.isArray(parsed.cases)) return { ok: false, reason: "The document has no `cases` list." };
  const bad = parsed.cases.findIndex((c) => !isObject(c));
  if (bad >= 0) return { ok: false, reason: `Case ${bad + 1} is not an object.` };
  const badExpect = (parsed.cases as Record<string, unknown>[]).findIndex((c) => c.expect !== undefined && (!isObject(c.expect) || Object.values(c.expect).some((e) => !isObject(e))));
  if (badExpect >= 0) return { ok: false, reason: `Case ${badExpect + 1}: \`expect\` must map JSON Pointers to objects of checks.` };
  return { ok: true, doc: parsed as SuiteDoc };
}

export function checkRows(c: CaseDoc): CheckRow[] {
  const rows: CheckRow[] = [];
  for (const [path, expectation] of Object.entries(c.expect ?? {})) {
    for (const kind of CHECK_KINDS) {
      if (!(kind in expectation)) continue;
      const extra: Record<string, Json> = {};
      for (const m of MODIFIERS[kind] ?? []) if (m in expectation) extra[m] = expectation[m];
      rows.push({ path, kind, value: expectation[kind], extra });
    }
  }
  return rows;
}

/** Rows back into `expect`: checks of one path merge into one object, in the rows' order. */
export function expectFromRows(rows: readonly CheckRow[]): Record<string, Record<string, Json>> {
  const out: Record<string, Record<string, Json>> = {};
  for (const row of rows) out[row.path] = { ...(out[row.path] ?? {}), [row.kind]: row.value, ...row.extra };
  return out;
}

/** A case with its rows replaced (no `expect` key when there are none, as a hand-written case would have). */
export function withRows(c: CaseDoc, rows: readonly CheckRow[]): CaseDoc {
  const { expect: _old, ...rest } = c;
  return rows.length ? { ...rest, expect: expectFromRows(rows) } : rest;
}

/** What a value looks like in its cell: text kinds and strings that could not be mistaken for JSON as they are; the rest as JSON. */
export function valueText(kind: CheckKind, value: Json): string {
  if (typeof value === "string" && (TEXT_KINDS.includes(kind) || parseLoose(value) === value)) return value;
  return value === undefined ? "" : JSON.stringify(value);
}

/** What was typed in a value cell: JSON when it parses (numbers, quoted strings, lists…), otherwise the text itself. */
export function parseValue(kind: CheckKind, text: string): Json {
  if (FLAG_KINDS.includes(kind)) return true;
  if (TEXT_KINDS.includes(kind) && !text.trimStart().startsWith("{")) return text;
  return parseLoose(text);
}

function parseLoose(text: string): Json {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A fresh value when a row's kind changes: flags are `true`, numbers start at 0, the rest keeps the text. */
export function valueForKind(kind: CheckKind, previous: Json): Json {
  if (FLAG_KINDS.includes(kind)) return true;
  if (kind === "approx" || kind === "min" || kind === "max" || kind === "length") return typeof previous === "number" ? previous : 0;
  if (kind === "oneOf") return Array.isArray(previous) ? previous : [previous === true ? "" : previous];
  if (previous === true) return "";
  return previous;
}

/** A name not yet used in the suite: "base (copy)", "base (copy 2)"… */
export function uniqueName(cases: readonly CaseDoc[], base: string): string {
  const names = new Set(cases.map((c) => String(c.name ?? "")));
  for (let i = 1; ; i++) {
    const name = i === 1 ? base : `${base} ${i}`;
    if (!names.has(name)) return name;
  }
}
