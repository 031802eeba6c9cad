"use client";

import { useEffect, useId, useRef, useState, type ButtonHTMLAttributes, type KeyboardEvent, type ReactNode } from "react";
import { Button } from "./button";

/**
 * A menu button (WAI-ARIA APG "menu button" pattern): Enter, Space or ↓ opens the menu on its first
 * item, ↑ on its last; ↑/↓ move (wrapping), Home/End jump; Esc closes it and puts focus back on the
 * button; Tab closes it and moves on; a click elsewhere closes it. An action closes it too (`close`),
 * focus back on the button.
 */
export function MenuButton({ label, children }: { label: string; children: (close: () => void) => ReactNode }) {
  const [open, setOpen] = useState(false);
  const id = useId();
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  /** Which item takes focus when the menu opens. */
  const [initial, setInitial] = useState<"first" | "last">("first");
  const items = () => [...(menu.current?.querySelectorAll<HTMLElement>('[role="menuitem"]:not([disabled])') ?? [])];

  const close = (refocus = true) => {
    setOpen(false);
    if (refocus) button.current?.focus();
  };
  const openAt = (where: "first" | "last") => {
    setInitial(where);
    setOpen(true);
  };

  useEffect(() => {
    if (!open) return;
    const list = items();
    (initial === "first" ? list[0] : list.at(-1))?.focus();
    const away = (e: MouseEvent) => {
      if (!root.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener("mousedown", away);
    return () => document.removeEventListener("mousedown", away);
  }, [open, initial]);

  const onMenuKey = (e: KeyboardEvent) => {
    const list = items();
    const at = list.indexOf(document.activeElement as HTMLElement);
    const move = (to: number) => {
      e.preventDefault();
      list[(to + list.length) % list.length]?.focus();
    };
    if (e.key === "ArrowDown") move(at + 1);
    else if (e.key === "ArrowUp") move(at - 1);
    else if (e.key === "Home") move(0);
    else if (e.key === "End") move(list.length - 1);
    else if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      close();
    } else if (e.key === "Tab") close(false);
  };

  return (
    <div ref={root} className="relative">
      <Button
        ref={button}
        id={`${id}-button`}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={id}
        onClick={() => (open ? close() : openAt("first"))}
        onKeyDown={(e) => {
          if (e.key === "ArrowDown" || e.key === "ArrowUp") {
            e.preventDefault();
            openAt(e.key === "ArrowDown" ? "first" : "last");
          }
        }}
      >
        {label} <span aria-hidden>▾</span>
      </Button>
      <div
        ref={menu}
        id={id}
        role="menu"
        aria-labelledby={`${id}-button`}
        hidden={!open}
        onKeyDown={onMenuKey}
        className="absolute right-0 z-30 mt-1 flex w-48 flex-col gap-1 rounded border border-zinc-300 bg-white p-1 shadow-lg dark:border-zinc-700 dark:bg-zinc-900"
      >
        {children(() => close())}
      </div>
    </div>
  );
}

/** An action in a MenuButton's menu: reached by the arrow keys, not by Tab. */
export function MenuItem({ className = "", ...props }: ButtonHTMLAttributes<HTMLButtonElement>) {
  return (
    <button
      type="button"
      role="menuitem"
      tabIndex={-1}
      className={`w-full rounded px-3 py-1.5 text-left text-sm whitespace-nowrap hover:bg-zinc-100 focus-visible:bg-zinc-100 focus-visible:outline-2 focus-visible:outline-blue-600 dark:hover:bg-zinc-800 dark:focus-visible:bg-zinc-800 ${className}`}
      {...props}
    />
  );
}
