"use client";

import { DEFAULT_LIMITS } from "@/lib/config/schema";
import type { FieldProblem } from "@/lib/client/api";
import { screenSchema } from "@/lib/schema/guard";
import { JsonEditor } from "./monaco/json-editor";

export interface SchemaEditorProps {
  value: string;
  onChange(value: string): void;
  /** Problems the API named under /schema/..., pinned to their place in the text. */
  problems: FieldProblem[];
  onRun(): void;
  dark: boolean;
}

/** The service's rules (top-level type, bounds, references, regexes), checked as the schema is typed. */
const rules = (schema: unknown) => screenSchema(schema, DEFAULT_LIMITS);
const underSchema = (path: string) => path.replace(/^\/schema/, "");

/** Monaco, as JSON validated against the meta-schema, with genserve's own rules as markers. */
export function SchemaEditor({ value, onChange, problems, onRun, dark }: SchemaEditorProps) {
  return (
    <JsonEditor
      value={value}
      onChange={onChange}
      path="schema.json"
      label="Schema editor"
      problemsLabel="Schema problems"
      problems={problems}
      lint={rules}
      pointerOf={underSchema}
      onRun={onRun}
      dark={dark}
      heightClass="h-96"
      testId="schema-editor"
    />
  );
}
