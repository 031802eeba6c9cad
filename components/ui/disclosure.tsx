"use client";

import { useId, type ReactNode } from "react";

/**
 * A section that opens and closes: its title, a one-line summary of what is set inside while it is
 * closed, and its content (kept mounted, so nothing typed is lost while closed).
 */
export function Disclosure({ title, summary, open, onToggle, children }: { title: string; summary?: ReactNode; open: boolean; onToggle(open: boolean): void; children: ReactNode }) {
  const id = useId();
  return (
    <section aria-label={title} className="rounded border border-zinc-200 dark:border-zinc-800">
      <h3>
        <button
          type="button"
          aria-expanded={open}
          aria-controls={id}
          onClick={() => onToggle(!open)}
          className="flex w-full items-center gap-2 rounded px-3 py-2 text-left text-sm font-medium hover:bg-zinc-50 dark:hover:bg-zinc-900"
        >
          <span aria-hidden className="w-3 text-xs text-zinc-600 dark:text-zinc-400">
            {open ? "▾" : "▸"}
          </span>
          {title}
          {summary ? <span className="min-w-0 truncate text-xs font-normal text-zinc-600 dark:text-zinc-400">{summary}</span> : null}
        </button>
      </h3>
      <div id={id} hidden={!open} className="space-y-4 border-t border-zinc-200 p-3 dark:border-zinc-800">
        {children}
      </div>
    </section>
  );
}
