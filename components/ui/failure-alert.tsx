import type { ReactNode } from "react";
import { ERROR_CODES } from "@/lib/errors";
import { ErrorAlert } from "./panel";

/**
 * A failed run in words: what happened (the code's title), the detail, the code with its HTTP status
 * and run id, each problem by path, and what to do next (`actions`).
 */
export function FailureAlert({
  error,
  problems,
  actions,
  children,
}: {
  error: { code: string; detail: string; status?: number; runId?: string };
  problems: readonly { path: string; message: string }[];
  actions?: ReactNode;
  children?: ReactNode;
}) {
  return (
    <ErrorAlert>
      <div className="flex flex-wrap items-start gap-2">
        <div className="mr-auto min-w-0">
          <p className="text-base font-semibold">{ERROR_CODES[error.code as keyof typeof ERROR_CODES]?.title ?? "The run failed"}</p>
          <p>{error.detail}</p>
        </div>
        {actions ? <div className="flex gap-2">{actions}</div> : null}
      </div>
      <p className="mt-1 text-xs opacity-80 [overflow-wrap:anywhere]">
        <code>{error.code}</code>
        {error.status ? ` · HTTP ${error.status}` : ""}
        {error.runId ? ` · run ${error.runId}` : ""}
      </p>
      {problems.length > 0 ? (
        <ul className="mt-1 list-disc pl-5 [overflow-wrap:anywhere]">
          {problems.map((p, i) => (
            <li key={i}>
              <code>{p.path}</code>: {p.message}
            </li>
          ))}
        </ul>
      ) : null}
      {children}
    </ErrorAlert>
  );
}
