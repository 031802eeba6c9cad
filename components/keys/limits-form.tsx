"use client";

import type { FieldProblem, LimitsChange } from "@/lib/client/api";
import type { LimitsView } from "@/lib/domain/key-limits";
import { Field, TextInput } from "../ui/field";

/** The form's text for each limit: "" is no limit. */
export type LimitsDraft = Record<keyof LimitsView, string>;

export const draftOf = (limits: LimitsView | null): LimitsDraft => ({
  rpm: limits?.rpm?.toString() ?? "",
  tpm: limits?.tpm?.toString() ?? "",
  concurrency: limits?.concurrency?.toString() ?? "",
  workflows: limits?.workflows?.join(", ") ?? "",
  budgetDailyUsd: limits?.budgetDailyUsd ?? "",
  budgetMonthlyUsd: limits?.budgetMonthlyUsd ?? "",
});

/** The draft as the API takes it: blank fields remove the limit; numbers that do not parse are sent as typed, for the API to name. */
export function changeOf(draft: LimitsDraft): LimitsChange {
  const count = (text: string): number | null => (text.trim() === "" ? null : /^\d+$/.test(text.trim()) ? Number(text.trim()) : (text as unknown as number));
  const workflows = draft.workflows.split(",").map((w) => w.trim()).filter(Boolean);
  return {
    rpm: count(draft.rpm),
    tpm: count(draft.tpm),
    concurrency: count(draft.concurrency),
    workflows: draft.workflows.trim() === "" ? null : workflows,
    budgetDailyUsd: draft.budgetDailyUsd.trim() === "" ? null : draft.budgetDailyUsd.trim(),
    budgetMonthlyUsd: draft.budgetMonthlyUsd.trim() === "" ? null : draft.budgetMonthlyUsd.trim(),
  };
}

const FIELDS: { name: keyof LimitsView; label: string; help: string; inputMode?: "numeric" | "decimal" }[] = [
  { name: "rpm", label: "Runs per minute", help: "Over it: 429 with Retry-After.", inputMode: "numeric" },
  { name: "tpm", label: "Tokens per minute", help: "Input and output; each run reserves its worst case.", inputMode: "numeric" },
  { name: "concurrency", label: "Runs at once", help: "Queued async runs wait for a slot.", inputMode: "numeric" },
  { name: "budgetDailyUsd", label: "Daily budget (USD)", help: "Per UTC day. Over it: 402.", inputMode: "decimal" },
  { name: "budgetMonthlyUsd", label: "Monthly budget (USD)", help: "Per UTC calendar month.", inputMode: "decimal" },
  { name: "workflows", label: "Workflows", help: "Comma-separated; others answer 403. Blank: all." },
];

/** The limit fields of a key, blank meaning no limit; `problems` are the API's, by JSON Pointer under /limits. */
export function LimitsFields({ idPrefix, draft, onChange, problems }: { idPrefix: string; draft: LimitsDraft; onChange(next: LimitsDraft): void; problems: readonly FieldProblem[] }) {
  return (
    <div className="grid gap-3 sm:grid-cols-3">
      {FIELDS.map((f) => {
        const id = `${idPrefix}-${f.name}`;
        const mine = problems.filter((p) => p.path === `/limits/${f.name}` || p.path.startsWith(`/limits/${f.name}/`));
        return (
          <Field key={f.name} id={id} label={f.label} help={f.help} problems={mine}>
            <TextInput
              id={id}
              value={draft[f.name]}
              inputMode={f.inputMode}
              placeholder="no limit"
              aria-invalid={mine.length > 0 || undefined}
              aria-describedby={`${id}-help${mine.length > 0 ? ` ${id}-error` : ""}`}
              onChange={(e) => onChange({ ...draft, [f.name]: e.target.value })}
            />
          </Field>
        );
      })}
    </div>
  );
}

