import type { HTMLAttributes } from "react";

/** A bordered section of a page (results, metadata, the inbox). */
export function Panel({ className = "", ...props }: HTMLAttributes<HTMLElement>) {
  return <section className={`rounded border border-zinc-200 p-3 dark:border-zinc-800 ${className}`} {...props} />;
}

/** A problem shown in a page: the error's code and detail, in an alert. */
export function ErrorAlert({ children }: { children: React.ReactNode }) {
  return (
    <div role="alert" className="rounded border border-red-300 bg-red-50 p-3 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100">
      {children}
    </div>
  );
}
