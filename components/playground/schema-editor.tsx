"use client";

import Editor, { type OnMount } from "@monaco-editor/react";
import { useEffect, useRef, useState } from "react";
import { DEFAULT_LIMITS } from "@/lib/config/schema";
import type { FieldProblem } from "@/lib/client/api";
import { rangeOf } from "@/lib/client/json-range";
import { screenSchema } from "@/lib/schema/guard";
import { loadMonaco, type Monaco } from "./monaco/load-monaco";
import { Button } from "../ui/button";

type EditorInstance = Parameters<OnMount>[0];

export interface SchemaEditorProps {
  value: string;
  onChange(value: string): void;
  /** Problems the API named under /schema/..., pinned to their place in the text. */
  problems: FieldProblem[];
  onRun(): void;
  dark: boolean;
}

/** Monaco, as JSON validated against the meta-schema, with genserve's own rules as markers. */
export function SchemaEditor({ value, onChange, problems, onRun, dark }: SchemaEditorProps) {
  const [monaco, setMonaco] = useState<Monaco | null>(null);
  const editorRef = useRef<EditorInstance | null>(null);
  const runRef = useRef(onRun);
  runRef.current = onRun;
  const [lint, setLint] = useState<FieldProblem[]>([]);

  useEffect(() => {
    let live = true;
    void loadMonaco().then((m) => live && setMonaco(m));
    return () => void (live = false);
  }, []);

  // The service's rules (top-level type, bounds, references, regexes), as the user types.
  useEffect(() => {
    const timer = setTimeout(() => {
      try {
        setLint(screenSchema(JSON.parse(value), DEFAULT_LIMITS));
      } catch {
        setLint([]); // not JSON yet: Monaco's own diagnostics say so
      }
    }, 250);
    return () => clearTimeout(timer);
  }, [value]);

  useEffect(() => {
    const model = editorRef.current?.getModel();
    if (!monaco || !model) return;
    const toMarker = (problem: FieldProblem, severity: number) => {
      const range = rangeOf(model.getValue(), problem.path.replace(/^\/schema/, ""));
      const start = model.getPositionAt(range.offset);
      const end = model.getPositionAt(range.offset + range.length);
      return { severity, message: problem.message, startLineNumber: start.lineNumber, startColumn: start.column, endLineNumber: end.lineNumber, endColumn: end.column };
    };
    monaco.editor.setModelMarkers(model, "genserve-rules", lint.map((p) => toMarker(p, monaco.MarkerSeverity.Warning)));
    monaco.editor.setModelMarkers(model, "genserve-api", problems.map((p) => toMarker(p, monaco.MarkerSeverity.Error)));
  }, [monaco, lint, problems, value]);

  const onMount: OnMount = (editor, m) => {
    editorRef.current = editor;
    editor.addCommand(m.KeyMod.CtrlCmd | m.KeyCode.Enter, () => runRef.current());
    // Format on save.
    editor.addCommand(m.KeyMod.CtrlCmd | m.KeyCode.KeyS, () => void editor.getAction("editor.action.formatDocument")?.run());
  };

  // A rule the API also reported is listed once, as the API's error.
  const all = [...problems, ...lint.filter((l) => !problems.some((p) => p.path === l.path && p.message === l.message))];
  return (
    <div>
      <div className="h-96 min-h-48 resize-y overflow-hidden rounded border border-zinc-300 dark:border-zinc-700" data-testid="schema-editor">
        {monaco ? (
          <Editor
            language="json"
            path="schema.json"
            value={value}
            onChange={(v) => onChange(v ?? "")}
            onMount={onMount}
            theme={dark ? "vs-dark" : "vs"}
            options={{
              minimap: { enabled: false },
              fontSize: 13,
              tabSize: 2,
              scrollBeyondLastLine: false,
              automaticLayout: true,
              ariaLabel: "Schema editor",
              formatOnPaste: true,
              // Hovers and suggestions may leave the editor's box instead of being clipped by it.
              fixedOverflowWidgets: true,
            }}
          />
        ) : (
          <p className="p-3 text-sm text-zinc-600 dark:text-zinc-400">Loading editor…</p>
        )}
      </div>
      <div className="mt-1 flex flex-wrap items-center gap-2 text-xs text-zinc-600 dark:text-zinc-400">
        <Button size="sm" onClick={() => void editorRef.current?.getAction("editor.action.formatDocument")?.run()} disabled={!monaco}>
          Format
        </Button>
        <span>Ctrl/⌘+S formats · Ctrl+M (Ctrl+Shift+M on a Mac) lets Tab leave the editor · drag the corner to resize</span>
      </div>
      {all.length > 0 ? (
        <ul className="mt-2 space-y-1 text-sm" aria-label="Schema problems">
          {all.map((p, i) => (
            <li key={`${p.path}-${i}`} className={i < problems.length ? "text-red-700 dark:text-red-400" : "text-amber-800 dark:text-amber-300"}>
              <code className="font-mono">{p.path.replace(/^\/schema/, "") || "/"}</code>: {p.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
