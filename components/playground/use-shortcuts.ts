"use client";

import { useEffect } from "react";

/** Ctrl/⌘+Enter runs; Esc cancels what is running. */
export function useShortcuts({ run, cancel, running }: { run(): void; cancel(): void; running: boolean }) {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
        event.preventDefault();
        run();
      } else if (event.key === "Escape" && running) {
        cancel();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [run, cancel, running]);
}
