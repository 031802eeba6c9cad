"use client";
import { Button } from "@/components/ui/button";

/**
 * Says what a permalink held that the playground could not use — each field named, with why — and
 * that the rest of the link was loaded, until dismissed.
 */
export function LinkNotice({ problems, onDismiss }: { problems: string[]; onDismiss(): void }) {
  if (problems.length === 0) return null;
  return (
    <div role="status" aria-label="Permalink problems" className="flex items-start gap-3 rounded border border-amber-400 bg-amber-50 p-3 text-sm text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100 lg:col-span-2">
      <div className="min-w-0 flex-1">
        <p>
          <strong>This link could not be loaded in full.</strong> The rest of it is loaded; these fields were not:
        </p>
        <ul className="mt-1 list-disc pl-5 break-words">
          {problems.slice(0, 12).map((problem) => (
            <li key={problem}>{problem}</li>
          ))}
        </ul>
      </div>
      <Button size="sm" onClick={onDismiss}>
        Dismiss
      </Button>
    </div>
  );
}
