"use client";

import { useEffect, useId, useRef, useState, type ReactNode } from "react";
import { Button } from "./button";

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

/**
 * A button that opens a small list of actions under it (Code: copy as curl, fetch, permalink).
 * Escape or a click elsewhere closes it; an action closes it too.
 */
export function MenuButton({ label, children }: { label: string; children: (close: () => void) => ReactNode }) {
  const [open, setOpen] = useState(false);
  const id = useId();
  const root = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const away = (e: MouseEvent) => {
      if (!root.current?.contains(e.target as Node)) setOpen(false);
    };
    const escape = (e: KeyboardEvent) => {
      if (e.key === "Escape") setOpen(false);
    };
    document.addEventListener("mousedown", away);
    document.addEventListener("keydown", escape);
    return () => {
      document.removeEventListener("mousedown", away);
      document.removeEventListener("keydown", escape);
    };
  }, [open]);
  return (
    <div ref={root} className="relative">
      <Button aria-expanded={open} aria-controls={id} onClick={() => setOpen(!open)}>
        {label} <span aria-hidden>▾</span>
      </Button>
      <div
        id={id}
        hidden={!open}
        className="absolute right-0 z-30 mt-1 flex w-48 flex-col gap-1 rounded border border-zinc-300 bg-white p-1 shadow-lg dark:border-zinc-700 dark:bg-zinc-900"
      >
        {children(() => setOpen(false))}
      </div>
    </div>
  );
}
