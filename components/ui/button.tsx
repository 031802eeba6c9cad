import type { ButtonHTMLAttributes, Ref } from "react";

const VARIANTS = {
  primary: "rounded bg-blue-700 font-medium text-white hover:bg-blue-800 disabled:opacity-60",
  secondary: "rounded border border-zinc-400 hover:bg-zinc-100 disabled:opacity-60 dark:border-zinc-600 dark:hover:bg-zinc-800",
  danger: "rounded border border-red-400 text-red-800 hover:bg-red-50 dark:text-red-300 dark:hover:bg-red-950",
} as const;
const SIZES = { sm: "px-2 py-0.5 text-xs", md: "px-2 py-1 text-sm", lg: "px-4 py-2 text-sm" } as const;

export interface ButtonProps extends ButtonHTMLAttributes<HTMLButtonElement> {
  variant?: keyof typeof VARIANTS;
  size?: keyof typeof SIZES;
  ref?: Ref<HTMLButtonElement>;
}

/** The app's one button: primary (the page's main action), secondary, or danger. Type "button" unless told. */
export function Button({ variant = "secondary", size = "md", type = "button", className = "", ...props }: ButtonProps) {
  return <button type={type} className={`shrink-0 whitespace-nowrap ${VARIANTS[variant]} ${SIZES[size]} ${className}`} {...props} />;
}
