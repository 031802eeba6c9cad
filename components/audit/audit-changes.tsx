import type { AuditEventView } from "@/lib/api/audit-shapes";

const shown = (value: unknown) => (value === undefined ? "—" : typeof value === "string" && value !== "" ? value : JSON.stringify(value));

/**
 * What one change changed: each field with its value before (struck out) and after. `relative` keeps
 * the screen-reader words (absolutely placed) inside the table's scroll box on a phone.
 */
export function AuditChanges({ changes }: { changes: AuditEventView["changes"] }) {
  const fields = Object.entries(changes);
  if (fields.length === 0) return <span className="text-zinc-600 dark:text-zinc-400">—</span>;
  return (
    <dl className="grid grid-cols-[auto_1fr] gap-x-2 gap-y-0.5 text-xs">
      {fields.map(([name, { before, after }]) => (
        <div key={name} className="contents">
          <dt className="font-mono text-zinc-700 dark:text-zinc-300">{name}</dt>
          <dd className="relative min-w-0 font-mono break-words">
            {"before" in (changes[name] ?? {}) ? (
              <>
                <span className="sr-only">before: </span>
                <del className="text-red-800 dark:text-red-300">{shown(before)}</del>{" "}
                <span aria-hidden>→</span>{" "}
              </>
            ) : null}
            <span className="sr-only">after: </span>
            <ins className="text-green-800 no-underline dark:text-green-300">{shown(after)}</ins>
          </dd>
        </div>
      ))}
    </dl>
  );
}
