"use client";

import Editor, { type OnMount } from "@monaco-editor/react";
import { useEffect, useRef, useState } from "react";
import type { FieldProblem } from "@/lib/client/api";
import { rangeOf } from "@/lib/client/json-range";
import { Button } from "../../ui/button";
import { loadMonaco, type Monaco } from "./load-monaco";

type EditorInstance = Parameters<OnMount>[0];

export interface JsonEditorProps {
  value: string;
  onChange(value: string): void;
  /** The model's path: `schema.json` is validated against the JSON Schema meta-schema (load-monaco.ts). */
  path: string;
  /** The editor's accessible name, and the problem list's. */
  label: string;
  problemsLabel: string;
  /** Problems the API answered (errors), pinned to their place in the text. */
  problems: FieldProblem[];
  /** Rules checked as the text is typed, on the parsed value (warnings). */
  lint(value: unknown): FieldProblem[];
  /** Where a problem's path points in this text (the API may name it under a prefix such as /schema). */
  pointerOf?(path: string): string;
  /** Ctrl/⌘+S: the editor's save (default: format the document); Ctrl/⌘+Enter: `onRun`. */
  onSave?(): void;
  onRun?(): void;
  dark: boolean;
  heightClass: string;
  testId: string;
  /** What Ctrl/⌘+S does, for the hint under the editor. */
  saveHint?: string;
}

/**
 * Monaco for a JSON document (loaded from the package, never a CDN), with two kinds of markers —
 * rules checked while typing, and the API's answer — listed under it too, a Format button and the
 * keyboard hints. The schema editor and the suite editor are both this.
 */
export function JsonEditor({ value, onChange, path, label, problemsLabel, problems, lint: check, pointerOf = (p) => p, onSave, onRun, dark, heightClass, testId, saveHint = "formats" }: JsonEditorProps) {
  const [monaco, setMonaco] = useState<Monaco | null>(null);
  const editorRef = useRef<EditorInstance | null>(null);
  const handlers = useRef({ onSave, onRun, check, pointerOf });
  handlers.current = { onSave, onRun, check, pointerOf };
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
      setLint(handlers.current.check(parsed));
    }, 250);
    return () => clearTimeout(timer);
  }, [value]);

  useEffect(() => {
    const model = editorRef.current?.getModel();
    if (!monaco || !model) return;
    const toMarker = (problem: FieldProblem, severity: number) => {
      const range = rangeOf(model.getValue(), handlers.current.pointerOf(problem.path));
      const start = model.getPositionAt(range.offset);
      const end = model.getPositionAt(range.offset + range.length);
      return { severity, message: problem.message, startLineNumber: start.lineNumber, startColumn: start.column, endLineNumber: end.lineNumber, endColumn: end.column };
    };
    monaco.editor.setModelMarkers(model, "genserve-rules", lint.map((p) => toMarker(p, monaco.MarkerSeverity.Warning)));
    monaco.editor.setModelMarkers(model, "genserve-api", problems.map((p) => toMarker(p, monaco.MarkerSeverity.Error)));
  }, [monaco, lint, problems, value]);

  const format = () => void editorRef.current?.getAction("editor.action.formatDocument")?.run();
  const onMount: OnMount = (editor, m) => {
    editorRef.current = editor;
    editor.addCommand(m.KeyMod.CtrlCmd | m.KeyCode.Enter, () => handlers.current.onRun?.());
    editor.addCommand(m.KeyMod.CtrlCmd | m.KeyCode.KeyS, () => (handlers.current.onSave ? handlers.current.onSave() : format()));
    // Tab indents, as in every code editor; Esc then Tab (or Shift+Tab) moves on, so the keyboard
    // is never trapped here. Any other key, or leaving, gives Tab back to indenting.
    const tabMovesFocus = (on: boolean) => editor.updateOptions({ tabFocusMode: on });
    editor.onKeyDown((e) => {
      if (e.keyCode === m.KeyCode.Escape) tabMovesFocus(true);
      else if (e.keyCode !== m.KeyCode.Tab && e.keyCode !== m.KeyCode.Shift) tabMovesFocus(false);
    });
    editor.onDidBlurEditorText(() => tabMovesFocus(false));
  };

  // A rule the API also reported is listed once, as the API's error.
  const all = [...problems, ...lint.filter((l) => !problems.some((p) => p.path === l.path && p.message === l.message))];
  return (
    <div>
      <div className={`${heightClass} min-h-48 resize-y overflow-hidden rounded border border-zinc-300 dark:border-zinc-700`} data-testid={testId}>
        {monaco ? (
          <Editor
            language="json"
            path={path}
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
              ariaLabel: label,
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
        <Button size="sm" onClick={format} disabled={!monaco}>
          Format
        </Button>
        <span>
          <kbd>Esc</kbd> then <kbd>Tab</kbd> leaves the editor · Ctrl/⌘+S {saveHint} · drag the corner to resize
        </span>
      </div>
      {all.length > 0 ? (
        <ul className="mt-2 max-h-40 space-y-1 overflow-auto text-sm" aria-label={problemsLabel}>
          {all.map((p, i) => (
            <li key={`${p.path}-${i}`} className={i < problems.length ? "text-red-700 dark:text-red-400" : "text-amber-800 dark:text-amber-300"}>
              <code className="font-mono break-words">{pointerOf(p.path) || "/"}</code>: {p.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
