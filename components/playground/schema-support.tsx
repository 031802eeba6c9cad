"use client";

import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import type { SchemaCheck } from "@/lib/client/api";
import { queryKeys } from "@/lib/client/query-keys";
import { useApiKey } from "../key-context";

/**
 * Before Run: what the chosen workflow's model makes of the schema being edited — every keyword
 * enforced while generating (a local model's exact grammar), which ones are checked after generation
 * (with retry), whether a provider's strict mode is on and what keeps it off, what genserve would
 * refuse, and what it would tolerate with a warning. Asked of the server (POST /api/v1/schemas/check)
 * half a second after the last keystroke.
 */
export function SchemaSupport({ schemaText, workflowSlug }: { schemaText: string; workflowSlug: string }) {
  const { apiKey, client } = useApiKey();
  const [settled, setSettled] = useState(schemaText);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(schemaText), 500);
    return () => clearTimeout(timer);
  }, [schemaText]);
  const schema = parseObject(settled);
  const check = useQuery({
    queryKey: queryKeys.schemaCheck(apiKey ?? "", workflowSlug, settled),
    queryFn: ({ signal }) => client!.checkSchema({ schema: schema!, workflowSlug: workflowSlug || undefined }, signal),
    enabled: Boolean(client && schema),
    staleTime: 60_000,
    retry: false,
  });
  if (!schema || !check.data) return null;
  return (
    <div aria-label="How the model holds the output to this schema" aria-live="polite" className="rounded border border-zinc-200 p-2 text-sm dark:border-zinc-700">
      <Summary check={check.data} />
      {check.data.warnings.length > 0 ? (
        <ul className="mt-1 list-disc pl-5 text-amber-800 dark:text-amber-300">
          {check.data.warnings.map((w) => (
            <li key={w}>{w}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function Summary({ check }: { check: SchemaCheck }) {
  const model = check.model ? `“${check.model.alias}”` : "the model";
  if (!check.accepted) {
    return (
      <div className="text-red-700 dark:text-red-400">
        <p className="font-medium">Runs would refuse this schema:</p>
        <ul className="list-disc pl-5">
          {check.problems.map((p, i) => (
            <li key={`${p.path}-${i}`}>
              <code className="font-mono">{p.path.replace(/^\/schema/, "") || "/"}</code>: {p.message}
            </li>
          ))}
        </ul>
      </div>
    );
  }
  const support = check.support;
  if (!support) return <p>genserve accepts this schema; pick a workflow to see how its model holds outputs to it.</p>;
  if (support.mode === "grammar") {
    if (support.exact) return <p className="text-emerald-800 dark:text-emerald-300">Every keyword is enforced while {model} generates (grammar): outputs validate on the first attempt.</p>;
    return (
      <div>
        <p>
          {model} generates under a grammar for this schema; these are <strong>checked after generation</strong>, with retry:
        </p>
        <Notes notes={support.notes} />
      </div>
    );
  }
  if (support.mode === "provider") {
    if (support.strict === true) return <p>{model} is asked for OpenAI&apos;s strict structured output: the provider holds decoding to the schema. genserve validates every output too.</p>;
    if (support.strict === false) {
      return (
        <div>
          <p>
            {model} is asked for structured output <strong>without strict mode</strong>, which this schema does not fit; genserve validates every output and retries:
          </p>
          <Notes notes={support.notes} />
        </div>
      );
    }
    return <p>{model} is asked for the provider&apos;s structured output; genserve validates every output and retries.</p>;
  }
  return <p>{model} reads the schema in its prompt only; genserve validates every output and retries.</p>;
}

function Notes({ notes }: { notes: string[] }) {
  return (
    <ul className="list-disc pl-5 font-mono text-xs">
      {notes.map((n) => (
        <li key={n}>{n}</li>
      ))}
    </ul>
  );
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
