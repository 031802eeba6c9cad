"use client";

import { useState } from "react";
import { useApiKey } from "./key-context";
import { Select } from "./ui/field";

/**
 * The project the signed-in person acts in, for people in two or more projects: choosing another
 * switches the session's key (the page's data, cached by key, is read again for it).
 */
export function ProjectSwitcher() {
  const { session, switchProject } = useApiKey();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const projects = session?.projects ?? [];
  if (projects.length < 2 || !session) return null;
  const change = async (slug: string) => {
    setError(null);
    setBusy(true);
    try {
      await switchProject(slug);
    } catch (e) {
      setError(`Could not switch project: ${(e as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <span className="flex items-center gap-1.5">
      <label htmlFor="project-switcher" className="sr-only text-sm text-zinc-700 sm:not-sr-only dark:text-zinc-300">
        Project
      </label>
      <Select id="project-switcher" compact value={session.project.slug} disabled={busy} onChange={(e) => void change(e.target.value)} className="max-w-32 sm:max-w-48">
        {projects.map((p) => (
          <option key={p.slug} value={p.slug}>
            {p.name} ({p.role})
          </option>
        ))}
      </Select>
      {error ? (
        <span role="alert" className="max-w-64 text-sm text-red-700 dark:text-red-400">
          {error}
        </span>
      ) : null}
    </span>
  );
}
