"use client";

import Editor, { type OnMount } from "@monaco-editor/react";
import { useEffect, useRef, useState } from "react";
import { loadMonaco, type Monaco } from "./load-monaco";

/**
 * Monaco for prose (a workflow's instructions): wrapped lines, Markdown colouring, Ctrl/⌘+Enter
 * runs, and Tab leaves the editor (instructions rarely need a tab character). Read-only for keys
 * that may not edit the workflow.
 */
export function TextEditor(props: { value: string; onChange(value: string): void; label: string; onRun(): void; dark: boolean; readOnly: boolean; testId: string; describedBy?: string }) {
  const [monaco, setMonaco] = useState<Monaco | null>(null);
  const onRun = useRef(props.onRun);
  onRun.current = props.onRun;
  useEffect(() => {
    let live = true;
    void loadMonaco().then((m) => live && setMonaco(m));
    return () => void (live = false);
  }, []);
  const onMount: OnMount = (editor, m) => {
    editor.addCommand(m.KeyMod.CtrlCmd | m.KeyCode.Enter, () => onRun.current());
    if (props.describedBy) editor.getDomNode()?.querySelector("textarea")?.setAttribute("aria-describedby", props.describedBy);
  };
  return (
    <div className="h-40 min-h-24 resize-y overflow-hidden rounded border border-zinc-300 dark:border-zinc-700" data-testid={props.testId}>
      {monaco ? (
        <Editor
          language="markdown"
          path="instructions.md"
          value={props.value}
          onChange={(v) => props.onChange(v ?? "")}
          onMount={onMount}
          theme={props.dark ? "vs-dark" : "vs"}
          options={{
            minimap: { enabled: false },
            fontSize: 13,
            wordWrap: "on",
            lineNumbers: "off",
            folding: false,
            scrollBeyondLastLine: false,
            automaticLayout: true,
            ariaLabel: props.label,
            readOnly: props.readOnly,
            tabFocusMode: true,
            renderLineHighlight: "none",
            fixedOverflowWidgets: true,
          }}
        />
      ) : (
        <p className="p-3 text-sm text-zinc-600 dark:text-zinc-400">Loading editor…</p>
      )}
    </div>
  );
}
