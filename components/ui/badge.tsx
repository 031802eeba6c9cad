import type { ReactNode } from "react";

const TONES = {
  neutral: "bg-zinc-200 text-zinc-800 dark:bg-zinc-700 dark:text-zinc-100",
  info: "bg-blue-100 text-blue-900 dark:bg-blue-900 dark:text-blue-100",
  success: "bg-green-100 text-green-900 dark:bg-green-900 dark:text-green-100",
  warning: "bg-amber-100 text-amber-900 dark:bg-amber-900 dark:text-amber-100",
  danger: "bg-red-100 text-red-900 dark:bg-red-900 dark:text-red-100",
} as const;

export type BadgeTone = keyof typeof TONES;

/** A short status word (a field's state, a run's status). */
export function Badge({ tone = "neutral", children, className = "" }: { tone?: BadgeTone; children: ReactNode; className?: string }) {
  return <span className={`rounded px-1 ${TONES[tone]} ${className}`}>{children}</span>;
}

/** The tone of a run's status. */
export const statusTone = (status: string): BadgeTone =>
  status === "succeeded" ? "success" : status === "failed" ? "danger" : status === "cancelled" ? "warning" : status === "running" ? "info" : "neutral";
