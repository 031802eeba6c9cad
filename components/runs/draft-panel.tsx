import type { RunDraft } from "@/lib/domain/drafts";
import { Panel } from "../ui/panel";

const show = (value: unknown) => (value === null ? "default" : Array.isArray(value) ? value.join(", ") || "none" : String(value));

/**
 * A draft run's definition against the version it started from: the parameters that changed, and
 * the instructions as a line diff (removed lines red, added green).
 */
export function DraftPanel({ draft, slug }: { draft: RunDraft; slug: string }) {
  const parameters = draft.changes.filter((c) => c.name !== "instructions");
  return (
    <Panel aria-label="Draft" className="mt-4 text-sm">
      <h2 className="text-lg font-semibold">Draft run</h2>
      <p className="mt-1 text-zinc-700 dark:text-zinc-300">
        An unsaved draft of {slug}@{draft.base} ran: this run is stored with the definition below; the workflow&apos;s versions did not change.
      </p>
      <dl aria-label="Definition that ran" className="mt-2 flex flex-wrap gap-x-4 gap-y-0.5">
        {(
          [
            ["model", draft.definition.model],
            ["temperature", draft.definition.temperature],
            ["max output tokens", draft.definition.maxOutputTokens],
            ["retries", draft.definition.retries],
            ["contexts", draft.definition.contexts],
          ] as const
        ).map(([term, value]) => (
          <div key={term} className="flex gap-1">
            <dt className="text-zinc-600 dark:text-zinc-400">{term}</dt>
            <dd>{show(value)}</dd>
          </div>
        ))}
      </dl>
      {parameters.length > 0 ? (
        <ul className="mt-2 space-y-0.5">
          {parameters.map((c) => (
            <li key={c.name}>
              <span className="font-medium">{c.name}</span>: {show(c.from)} → {show(c.to)}
            </li>
          ))}
        </ul>
      ) : null}
      {draft.instructionsDiff.length > 0 ? (
        <pre aria-label="Instructions diff" className="mt-2 max-h-80 overflow-auto rounded bg-zinc-50 p-2 font-mono text-xs whitespace-pre-wrap [overflow-wrap:anywhere] dark:bg-zinc-900">
          {draft.instructionsDiff.map((line, i) => (
            <span key={i} className={`block ${line.startsWith("+") ? "bg-green-100 text-green-900 dark:bg-green-950 dark:text-green-200" : line.startsWith("-") ? "bg-red-100 text-red-900 dark:bg-red-950 dark:text-red-200" : ""}`}>
              {line}
            </span>
          ))}
        </pre>
      ) : (
        <p className="mt-2 text-zinc-700 dark:text-zinc-300">The instructions are the version&apos;s.</p>
      )}
      <details className="mt-2">
        <summary className="cursor-pointer text-blue-700 dark:text-blue-400">The instructions that ran</summary>
        <pre data-testid="draft-instructions" className="mt-1 max-h-80 overflow-auto rounded bg-zinc-50 p-2 font-mono text-xs whitespace-pre-wrap [overflow-wrap:anywhere] dark:bg-zinc-900">
          {draft.definition.instructions}
        </pre>
      </details>
    </Panel>
  );
}
