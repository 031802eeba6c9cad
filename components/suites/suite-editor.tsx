"use client";

import { suiteDocumentSchema } from "@/lib/api/suite-shapes";
import type { FieldProblem } from "@/lib/client/api";
import { toPointer } from "@/lib/json/pointer";
import { JsonEditor } from "../playground/monaco/json-editor";

/** The suite's shape, as the API checks it, while it is typed. */
function shapeProblems(document: unknown): FieldProblem[] {
  const result = suiteDocumentSchema.safeParse(document);
  return result.success ? [] : result.error.issues.map((i) => ({ path: toPointer(i.path as (string | number)[]), message: i.message }));
}

/**
 * A suite document in Monaco (JSON), checked as it is typed against the same shape the API uses
 * (warnings), with the problems the API answered on save pinned to their place (errors).
 */
export function SuiteEditor({ value, onChange, problems, onSave, dark }: { value: string; onChange(value: string): void; problems: FieldProblem[]; onSave(): void; dark: boolean }) {
  return (
    <JsonEditor
      value={value}
      onChange={onChange}
      path="suite.json"
      label="Suite document"
      problemsLabel="Suite problems"
      problems={problems}
      lint={shapeProblems}
      onSave={onSave}
      saveHint="saves"
      dark={dark}
      heightClass="h-[28rem]"
      testId="suite-editor"
    />
  );
}
