"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import type { SuiteCase } from "@/lib/api/suite-shapes";
import { ApiError, type ApiClient, type RunSummary } from "@/lib/client/api";
import { queryKeys } from "@/lib/client/query-keys";
import { escapePointerSegment } from "@/lib/json/pointer";
import { Button } from "../ui/button";
import { Field, Select, TextInput } from "../ui/field";
import { Panel } from "../ui/panel";
import { ScrollTable } from "../ui/scroll-table";

type Kind = "equals" | "present" | "absent" | "skip";
interface Row {
  path: string;
  kind: Kind;
  /** The expected value as JSON text (for equals). */
  value: string;
}

/** The run's output as one expectation per top-level field (the whole text for a text run), each editable. */
function rowsOf(run: RunSummary): Row[] {
  const output = run.output;
  if (output !== null && typeof output === "object" && !Array.isArray(output)) {
    return Object.entries(output as Record<string, unknown>).map(([key, value]) => ({ path: `/${escapePointerSegment(key)}`, kind: "equals", value: JSON.stringify(value) }));
  }
  return [{ path: "", kind: "equals", value: JSON.stringify(output) }];
}

/**
 * "Save as test case": the run's input and contexts as a case of a suite (created if it does not
 * exist, with the run's workflow and schema), its output as the expected values, each field
 * editable (or dropped) before saving.
 */
export function SaveAsCase({ client, apiKey, run }: { client: ApiClient; apiKey: string; run: RunSummary }) {
  const queryClient = useQueryClient();
  const suites = useQuery({ queryKey: queryKeys.suites(apiKey), queryFn: ({ signal }) => client.listSuites(signal) });
  const [slug, setSlug] = useState("");
  const [name, setName] = useState(run.input.slice(0, 60).trim() || run.id);
  const [rows, setRows] = useState<Row[]>(() => rowsOf(run));
  const [error, setError] = useState<string | null>(null);

  const save = useMutation({
    mutationFn: async () => {
      const expect: NonNullable<SuiteCase["expect"]> = {};
      for (const row of rows) {
        if (row.kind === "skip") continue;
        if (row.kind === "equals") {
          try {
            expect[row.path] = { equals: JSON.parse(row.value) as unknown };
          } catch {
            throw new ApiError(400, "validation_failed", `The expected value of ${row.path || "the output"} is not JSON.`);
          }
        } else expect[row.path] = row.kind === "present" ? { present: true } : { absent: true };
      }
      const testCase: SuiteCase = { name, input: run.input, ...(run.contextSlugs.length ? { contexts: run.contextSlugs } : {}), expect };
      const existing = await client.getSuite(slug);
      if (existing) {
        if (existing.document.cases.some((c) => c.name === name)) throw new ApiError(409, "conflict", `The suite already has a case named “${name}”.`);
        return client.putSuite(slug, { ...existing.document, cases: [...existing.document.cases, testCase] });
      }
      return client.putSuite(slug, { workflow: run.workflowSlug, ...(run.schema ? { schema: run.schema } : {}), cases: [testCase] });
    },
    onMutate: () => setError(null),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.suites(apiKey) });
      await queryClient.invalidateQueries({ queryKey: queryKeys.suite(apiKey, slug) });
    },
    onError: (e) => setError(e instanceof ApiError ? [e.detail, ...e.errors.map((p) => `${p.path}: ${p.message}`)].join(" · ") : (e as Error).message),
  });

  const update = (i: number, patch: Partial<Row>) => setRows((all) => all.map((row, j) => (j === i ? { ...row, ...patch } : row)));
  return (
    <Panel aria-label="Save as test case" className="mt-6 space-y-3">
      <h2 className="text-lg font-semibold">Save as test case</h2>
      <p className="text-sm text-zinc-600 dark:text-zinc-400">The run&apos;s input and contexts become a case; its output, the expected values. Attachments are not kept with runs: add them to the suite.</p>
      <div className="flex flex-wrap gap-3">
        <Field id="case-suite" label="Suite (existing or new)">
          <TextInput id="case-suite" list="case-suites" value={slug} onChange={(e) => setSlug(e.target.value)} placeholder="invoice-extraction" />
          <datalist id="case-suites">
            {(suites.data ?? []).map((s) => (
              <option key={s.slug} value={s.slug} />
            ))}
          </datalist>
        </Field>
        <Field id="case-name" label="Case name">
          <TextInput id="case-name" value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
      </div>
      <ScrollTable className="w-full text-left text-sm" aria-label="Expected fields">
        <thead>
          <tr className="border-b border-zinc-300 dark:border-zinc-700">
            <th className="py-1.5 pr-3">Field</th>
            <th className="py-1.5 pr-3">Check</th>
            <th className="py-1.5 pr-3">Expected value (JSON)</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={row.path} className="border-b border-zinc-100 dark:border-zinc-800">
              <td className="py-1 pr-3 font-mono text-xs">{row.path || "(output)"}</td>
              <td className="py-1 pr-3">
                <Select compact aria-label={`Check of ${row.path || "the output"}`} value={row.kind} onChange={(e) => update(i, { kind: e.target.value as Kind })}>
                  <option value="equals">equals</option>
                  <option value="present">present</option>
                  <option value="absent">absent</option>
                  <option value="skip">(not checked)</option>
                </Select>
              </td>
              <td className="py-1 pr-3">
                <TextInput aria-label={`Expected value of ${row.path || "the output"}`} value={row.value} disabled={row.kind !== "equals"} onChange={(e) => update(i, { value: e.target.value })} className="font-mono text-xs" />
              </td>
            </tr>
          ))}
        </tbody>
      </ScrollTable>
      {error ? (
        <p role="alert" className="text-sm text-red-700 dark:text-red-400">
          {error}
        </p>
      ) : null}
      <div className="flex items-center gap-3">
        <Button variant="primary" onClick={() => save.mutate()} disabled={save.isPending || !slug || !name}>
          Save case
        </Button>
        {save.isSuccess ? (
          <span role="status" className="text-sm">
            Saved to{" "}
            <Link href={`/suites?suite=${encodeURIComponent(slug)}`} className="underline">
              {slug}
            </Link>{" "}
            (v{save.data.version}).
          </span>
        ) : null}
      </div>
    </Panel>
  );
}
