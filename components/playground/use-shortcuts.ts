"use client";

import { useEffect } from "react";

/** Ctrl/⌘+Enter runs; Esc cancels what is running; Ctrl/⌘+Alt+P toggles the presenter view. */
export function useShortcuts({ run, cancel, running, present }: { run(): void; cancel(): void; running: boolean; present?(): void }) {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
        event.preventDefault();
        run();
      } else if ((event.ctrlKey || event.metaKey) && event.altKey && event.code === "KeyP" && present) {
        event.preventDefault();
        present();
      } else if (event.key === "Escape" && running) {
        cancel();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [run, cancel, running, present]);
}
