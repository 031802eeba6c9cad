"use client";

import { memo, useState } from "react";
import type { FieldProblem } from "@/lib/client/api";
import { schemaFromExample } from "@/lib/client/schema-from-example";
import { SCHEMA_TEMPLATES } from "@/lib/client/templates";
import { useTheme } from "../theme";
import { Button } from "../ui/button";
import { Field, Select, TextArea } from "../ui/field";
import { SchemaEditor } from "./schema-editor";
import { SchemaSupport } from "./schema-support";
import { pretty } from "./use-composition";

/**
 * The schema of an object run: Monaco, templates, and a schema made from a pasted example.
 * Memoised: typing elsewhere in the composition does not redraw the editor.
 */
export const SchemaSection = memo(function SchemaSection({
  schemaText,
  workflowSlug,
  onChange,
  problems,
  onRun,
}: {
  schemaText: string;
  workflowSlug: string;
  onChange(text: string): void;
  problems: FieldProblem[];
  onRun(): void;
}) {
  const { dark } = useTheme();
  const [showExample, setShowExample] = useState(false);
  const [exampleText, setExampleText] = useState("");
  const [exampleError, setExampleError] = useState<FieldProblem | null>(null);
  return (
    <section id="schema-section" aria-label="Schema" className="scroll-mt-20 space-y-2">
      <div className="flex flex-wrap items-center gap-2">
        <h2 className="mr-auto text-sm font-medium">Schema</h2>
        <label htmlFor="template" className="sr-only">
          Start from a template
        </label>
        <Select
          id="template"
          compact
          value=""
          onChange={(e) => {
            const template = SCHEMA_TEMPLATES.find((t) => t.id === e.target.value);
            if (template) onChange(pretty(template.schema));
          }}
        >
          <option value="">Templates…</option>
          {SCHEMA_TEMPLATES.map((t) => (
            <option key={t.id} value={t.id}>
              {t.label}
            </option>
          ))}
        </Select>
        <Button onClick={() => setShowExample(!showExample)} aria-expanded={showExample}>
          Schema from example
        </Button>
      </div>
      {showExample ? (
        <div className="space-y-2">
          <Field id="example" label={<span className="font-normal">Paste a JSON example</span>} problems={exampleError ? [exampleError] : []}>
            <TextArea id="example" rows={4} className="font-mono" value={exampleText} onChange={(e) => setExampleText(e.target.value)} />
          </Field>
          <Button
            onClick={() => {
              try {
                onChange(pretty(schemaFromExample(JSON.parse(exampleText))));
                setShowExample(false);
                setExampleError(null);
              } catch (error) {
                setExampleError({ path: "/example", message: `The example is not valid JSON: ${(error as Error).message}` });
              }
            }}
          >
            Make schema
          </Button>
        </div>
      ) : null}
      <SchemaEditor value={schemaText} onChange={onChange} problems={problems} onRun={onRun} dark={dark} />
      <SchemaSupport schemaText={schemaText} workflowSlug={workflowSlug} />
    </section>
  );
});
