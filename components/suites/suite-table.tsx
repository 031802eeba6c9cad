"use client";

import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import { CHECK_KINDS, type CheckKind } from "@/lib/api/suite-shapes";
import type { FieldProblem } from "@/lib/client/api";
import { Button } from "../ui/button";
import { controlClass, Select, TextArea, TextInput } from "../ui/field";
import { checkRows, FLAG_KINDS, parseValue, uniqueName, valueForKind, valueText, withRows, type CaseDoc, type CheckRow, type SuiteDoc } from "./suite-table-model";

const NEW_CHECK: CheckRow = { path: "/field", kind: "equals", value: "", extra: {} };

/**
 * The suite's cases as cards (one per case, also on a phone): name, input, and the expectations as
 * rows of field (JSON Pointer), check and expected value. Every edit writes the parsed document back
 * (`onChange`), so the text view shows it as it is. Enter in a name adds a case after it; Enter in
 * an expectation adds one under it.
 */
export function SuiteTable({ doc, onChange, problems }: { doc: SuiteDoc; onChange(doc: SuiteDoc): void; problems: readonly FieldProblem[] }) {
  // The control to focus once the next render is in (a row just added).
  const focusNext = useRef<string | null>(null);
  useEffect(() => {
    if (focusNext.current) {
      const el = document.getElementById(focusNext.current);
      el?.focus();
      // A new row's placeholder path is selected: typing replaces it.
      if (el instanceof HTMLInputElement && el.id.endsWith("-path")) el.select();
      focusNext.current = null;
    }
  });
  const setCases = (cases: CaseDoc[], focus?: string) => {
    focusNext.current = focus ?? null;
    onChange({ ...doc, cases });
  };
  const setCase = (i: number, c: CaseDoc, focus?: string) => setCases(doc.cases.map((old, j) => (j === i ? c : old)), focus);
  const insertCase = (at: number, c: CaseDoc) => setCases([...doc.cases.slice(0, at), c, ...doc.cases.slice(at)], `suite-case-${at}-name`);
  const addCase = (at: number) => insertCase(at, { name: uniqueName(doc.cases, `case ${doc.cases.length + 1}`), input: "", expect: { "/field": { equals: "" } } });

  return (
    <div className="space-y-3" data-testid="suite-table">
      {doc.cases.map((c, i) => (
        <CaseCard
          key={i}
          index={i}
          value={c}
          problems={problems.filter((p) => p.path === `/cases/${i}` || p.path.startsWith(`/cases/${i}/`))}
          onChange={(next, focus) => setCase(i, next, focus)}
          onAddAfter={() => addCase(i + 1)}
          onDuplicate={() => insertCase(i + 1, { ...structuredClone(c), name: uniqueName(doc.cases, `${String(c.name ?? "case")} (copy)`) })}
          onRemove={doc.cases.length > 1 ? () => setCases(doc.cases.filter((_, j) => j !== i), `suite-case-${Math.max(0, i - 1)}-name`) : undefined}
        />
      ))}
      <Button onClick={() => addCase(doc.cases.length)}>Add case</Button>
    </div>
  );
}

function CaseCard(props: {
  index: number;
  value: CaseDoc;
  problems: readonly FieldProblem[];
  onChange(next: CaseDoc, focus?: string): void;
  onAddAfter(): void;
  onDuplicate(): void;
  onRemove?: () => void;
}) {
  const { index: i, value: c, problems, onChange } = props;
  const rows = checkRows(c);
  const id = `suite-case-${i}`;
  const label = `Case ${i + 1}`;
  const setRows = (next: CheckRow[], focus?: string) => onChange(withRows(c, next), focus);
  const setRow = (j: number, row: CheckRow) => setRows(rows.map((r, k) => (k === j ? row : r)));
  // A path of its own: a check of a path already there would merge into that path's expectation.
  const freePath = () => [NEW_CHECK.path, ...Array.from({ length: rows.length + 1 }, (_, k) => `${NEW_CHECK.path}${k + 2}`)].find((p) => !rows.some((r) => r.path === p))!;
  const addRow = (at: number) => setRows([...rows.slice(0, at), { ...NEW_CHECK, path: freePath() }, ...rows.slice(at)], `${id}-check-${at}-path`);
  const enterAdds = (add: () => void) => (e: KeyboardEvent) => {
    if (e.key === "Enter" && !e.shiftKey && !e.metaKey && !e.ctrlKey && !e.altKey) {
      e.preventDefault();
      add();
    }
  };
  return (
    <fieldset className="min-w-0 rounded border border-zinc-300 p-3 dark:border-zinc-700" aria-describedby={problems.length ? `${id}-problems` : undefined}>
      <legend className="px-1 text-sm font-semibold">{label}</legend>
      <div className="flex flex-wrap items-end gap-2">
        <div className="min-w-[10rem] flex-1">
          <label htmlFor={`${id}-name`} className="block text-xs font-medium">
            Name
          </label>
          <TextInput id={`${id}-name`} aria-label={`${label} name`} value={String(c.name ?? "")} onChange={(e) => onChange({ ...c, name: e.target.value })} onKeyDown={enterAdds(props.onAddAfter)} />
        </div>
        <div className="flex gap-2">
          <Button size="sm" onClick={props.onDuplicate} aria-label={`Duplicate ${label.toLowerCase()}`}>
            Duplicate
          </Button>
          {props.onRemove ? (
            <Button size="sm" variant="danger" onClick={props.onRemove} aria-label={`Remove ${label.toLowerCase()}`}>
              Remove
            </Button>
          ) : null}
        </div>
      </div>
      <label htmlFor={`${id}-input`} className="mt-2 block text-xs font-medium">
        Input
      </label>
      <TextArea id={`${id}-input`} aria-label={`${label} input`} rows={3} className="font-mono" value={typeof c.input === "string" ? c.input : JSON.stringify(c.input ?? "")} onChange={(e) => onChange({ ...c, input: e.target.value })} />
      <div className="mt-2">
        <p className="text-xs font-medium" id={`${id}-checks`}>
          Expectations {rows.length === 0 ? <span className="font-normal text-zinc-600 dark:text-zinc-400">(none: the case passes when the output is valid)</span> : null}
        </p>
        {rows.length ? (
          <div className="mt-1 hidden grid-cols-[minmax(0,1fr)_8rem_minmax(0,1.5fr)_4.5rem] gap-2 text-xs text-zinc-600 dark:text-zinc-400 sm:grid" aria-hidden="true">
            <span>Field (JSON Pointer)</span>
            <span>Check</span>
            <span>Expected</span>
          </div>
        ) : null}
        <ul aria-labelledby={`${id}-checks`} className="space-y-2 sm:space-y-1">
          {rows.map((row, j) => (
            <li key={j} className="grid grid-cols-[minmax(0,1fr)_7rem] gap-1 sm:grid-cols-[minmax(0,1fr)_8rem_minmax(0,1.5fr)_4.5rem] sm:gap-2">
              <TextInput id={`${id}-check-${j}-path`} aria-label={`${label} expectation ${j + 1} field`} className="font-mono" value={row.path} placeholder="/total" onChange={(e) => setRow(j, { ...row, path: e.target.value })} onKeyDown={enterAdds(() => addRow(j + 1))} />
              <Select
                aria-label={`${label} expectation ${j + 1} check`}
                value={row.kind}
                onChange={(e) => {
                  const kind = e.target.value as CheckKind;
                  setRow(j, { path: row.path, kind, value: valueForKind(kind, row.value), extra: {} });
                }}
              >
                {CHECK_KINDS.map((k) => (
                  <option key={k} value={k}>
                    {k}
                  </option>
                ))}
              </Select>
              {FLAG_KINDS.includes(row.kind) ? (
                <span className={`${controlClass} col-span-2 text-zinc-600 dark:text-zinc-400 sm:col-span-1`}>(no value)</span>
              ) : (
                <ValueInput id={`${id}-check-${j}-value`} label={`${label} expectation ${j + 1} expected value`} row={row} onChange={(value) => setRow(j, { ...row, value })} onEnter={() => addRow(j + 1)} />
              )}
              <Button size="sm" className="justify-self-start sm:justify-self-stretch" onClick={() => setRows(rows.filter((_, k) => k !== j), j > 0 ? `${id}-check-${j - 1}-path` : `${id}-add-check`)} aria-label={`Remove ${label.toLowerCase()} expectation ${j + 1}`}>
                Remove
              </Button>
            </li>
          ))}
        </ul>
        <Button id={`${id}-add-check`} size="sm" className="mt-2" onClick={() => addRow(rows.length)} aria-label={`Add expectation to ${label.toLowerCase()}`}>
          Add expectation
        </Button>
      </div>
      {problems.length ? (
        <ul id={`${id}-problems`} className="mt-2 text-sm text-red-700 dark:text-red-400">
          {problems.map((p, k) => (
            <li key={k}>
              <code>{p.path}</code>: {p.message}
            </li>
          ))}
        </ul>
      ) : null}
    </fieldset>
  );
}

/**
 * An expected value as typed: JSON when it parses (5, "5", [1, 2]), the text itself otherwise. The
 * typed text is kept while it means the same value, so quotes do not vanish under the cursor.
 */
function ValueInput({ id, label, row, onChange, onEnter }: { id: string; label: string; row: CheckRow; onChange(value: unknown): void; onEnter(): void }) {
  const [text, setText] = useState(() => valueText(row.kind, row.value));
  const same = JSON.stringify(parseValue(row.kind, text)) === JSON.stringify(row.value);
  // Changed elsewhere (the text view, another kind): show the document's value.
  useEffect(() => {
    if (!same) setText(valueText(row.kind, row.value));
  }, [same, row.kind, row.value]);
  return (
    <TextInput
      id={id}
      aria-label={label}
      className="col-span-2 font-mono sm:col-span-1"
      value={same ? text : valueText(row.kind, row.value)}
      placeholder={row.kind === "matches" ? "^INV-[0-9]+$" : row.kind === "judge" ? "a criterion in words" : '"EUR", 42, [1, 2]'}
      onChange={(e) => {
        setText(e.target.value);
        onChange(parseValue(row.kind, e.target.value));
      }}
      onKeyDown={(e) => {
        if (e.key === "Enter" && !e.shiftKey && !e.metaKey && !e.ctrlKey && !e.altKey) {
          e.preventDefault();
          onEnter();
        }
      }}
    />
  );
}
