import type { InputHTMLAttributes, ReactNode, SelectHTMLAttributes, TextareaHTMLAttributes } from "react";
import type { FieldProblem } from "@/lib/client/api";

/** The look of every text input, textarea and select. */
export const controlClass = "w-full rounded border border-zinc-400 bg-white px-2 py-1.5 text-sm dark:border-zinc-600 dark:bg-zinc-900";

/** A field's errors under it, announced through the control's aria-describedby (`id`). */
export function FieldErrors({ id, problems }: { id: string; problems: readonly FieldProblem[] }) {
  if (problems.length === 0) return null;
  return (
    <ul id={id} className="mt-1 text-sm text-red-700 dark:text-red-400">
      {problems.map((p, i) => (
        <li key={i}>{p.message}</li>
      ))}
    </ul>
  );
}

/** A labelled field: label, the control (given `id`), optional help text and errors. */
export function Field({ id, label, help, problems = [], children, srOnlyLabel = false }: { id: string; label: ReactNode; help?: ReactNode; problems?: readonly FieldProblem[]; children: ReactNode; srOnlyLabel?: boolean }) {
  return (
    <div>
      <label htmlFor={id} className={srOnlyLabel ? "sr-only" : "block text-sm font-medium"}>
        {label}
      </label>
      {children}
      {help ? (
        <p id={`${id}-help`} className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">
          {help}
        </p>
      ) : null}
      <FieldErrors id={`${id}-error`} problems={problems} />
    </div>
  );
}

export function TextInput({ className = "", ...props }: InputHTMLAttributes<HTMLInputElement>) {
  return <input className={`${controlClass} ${className}`} {...props} />;
}

export function TextArea({ className = "", ...props }: TextareaHTMLAttributes<HTMLTextAreaElement>) {
  return <textarea className={`${controlClass} ${className}`} {...props} />;
}

/** A select; `compact` for one inline among buttons (no full width). */
export function Select({ className = "", compact = false, ...props }: SelectHTMLAttributes<HTMLSelectElement> & { compact?: boolean }) {
  return <select className={`${compact ? controlClass.replace("w-full ", "").replace("py-1.5", "py-1") : controlClass} ${className}`} {...props} />;
}
