"use client";

import Editor, { type OnMount } from "@monaco-editor/react";
import { useEffect, useRef, useState } from "react";
import { suiteDocumentSchema } from "@/lib/api/suites";
import type { FieldProblem } from "@/lib/client/api";
import { rangeOf } from "@/lib/client/json-range";
import { toPointer } from "@/lib/json/pointer";
import { loadMonaco, type Monaco } from "../playground/monaco/load-monaco";

type EditorInstance = Parameters<OnMount>[0];

/**
 * A suite document in Monaco (JSON), checked as it is typed against the same shape the API uses
 * (warnings), with the problems the API answered on save pinned to their place (errors).
 */
export function SuiteEditor({ value, onChange, problems, onSave, dark }: { value: string; onChange(value: string): void; problems: FieldProblem[]; onSave(): void; dark: boolean }) {
  const [monaco, setMonaco] = useState<Monaco | null>(null);
  const editorRef = useRef<EditorInstance | null>(null);
  const saveRef = useRef(onSave);
  saveRef.current = onSave;
  const [lint, setLint] = useState<FieldProblem[]>([]);

  useEffect(() => {
    let live = true;
    void loadMonaco().then((m) => live && setMonaco(m));
    return () => void (live = false);
  }, []);

  useEffect(() => {
    const timer = setTimeout(() => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch {
        setLint([]); // not JSON yet: Monaco's own diagnostics say so
        return;
      }
      const result = suiteDocumentSchema.safeParse(parsed);
      setLint(result.success ? [] : result.error.issues.map((i) => ({ path: toPointer(i.path as (string | number)[]), message: i.message })));
    }, 250);
    return () => clearTimeout(timer);
  }, [value]);

  useEffect(() => {
    const model = editorRef.current?.getModel();
    if (!monaco || !model) return;
    const toMarker = (problem: FieldProblem, severity: number) => {
      const range = rangeOf(model.getValue(), problem.path);
      const start = model.getPositionAt(range.offset);
      const end = model.getPositionAt(range.offset + range.length);
      return { severity, message: problem.message, startLineNumber: start.lineNumber, startColumn: start.column, endLineNumber: end.lineNumber, endColumn: end.column };
    };
    monaco.editor.setModelMarkers(model, "suite-shape", lint.map((p) => toMarker(p, monaco.MarkerSeverity.Warning)));
    monaco.editor.setModelMarkers(model, "suite-api", problems.map((p) => toMarker(p, monaco.MarkerSeverity.Error)));
  }, [monaco, lint, problems, value]);

  const onMount: OnMount = (editor, m) => {
    editorRef.current = editor;
    editor.addCommand(m.KeyMod.CtrlCmd | m.KeyCode.KeyS, () => saveRef.current());
  };

  const all = [...problems, ...lint.filter((l) => !problems.some((p) => p.path === l.path && p.message === l.message))];
  return (
    <div>
      <div className="h-[28rem] overflow-hidden rounded border border-zinc-300 dark:border-zinc-700" data-testid="suite-editor">
        {monaco ? (
          <Editor
            language="json"
            path="suite.json"
            value={value}
            onChange={(v) => onChange(v ?? "")}
            onMount={onMount}
            theme={dark ? "vs-dark" : "vs"}
            options={{ minimap: { enabled: false }, fontSize: 13, tabSize: 2, scrollBeyondLastLine: false, automaticLayout: true, ariaLabel: "Suite document", formatOnPaste: true }}
          />
        ) : (
          <p className="p-3 text-sm text-zinc-600 dark:text-zinc-400">Loading editor…</p>
        )}
      </div>
      {all.length > 0 ? (
        <ul className="mt-2 max-h-40 space-y-1 overflow-auto text-sm" aria-label="Suite problems">
          {all.map((p, i) => (
            <li key={`${p.path}-${i}`} className={i < problems.length ? "text-red-700 dark:text-red-400" : "text-amber-800 dark:text-amber-300"}>
              <code className="font-mono break-words">{p.path || "/"}</code>: {p.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
