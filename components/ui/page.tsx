import type { HTMLAttributes } from "react";

const WIDTHS = { narrow: "max-w-3xl", default: "max-w-5xl", wide: "max-w-6xl", full: "" } as const;

/**
 * A page's main area. Every page starts at the same left edge as the navigation (one frame, 1600 px
 * at most, centred); `width` only limits how far its content runs to the right.
 */
export function Page({ width = "default", className = "", children, ...props }: HTMLAttributes<HTMLElement> & { width?: keyof typeof WIDTHS }) {
  return (
    <main className={`mx-auto w-full max-w-[1600px] px-4 py-6 ${className}`} {...props}>
      <div className={WIDTHS[width]}>{children}</div>
    </main>
  );
}
