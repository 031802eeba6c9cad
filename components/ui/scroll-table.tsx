import type { TableHTMLAttributes } from "react";

/**
 * A table in its own box that scrolls sideways when the table is wider than the screen (a phone),
 * so the page never does. The box takes the keyboard focus, so it can be scrolled without a mouse.
 */
export function ScrollTable({ className = "", ...props }: TableHTMLAttributes<HTMLTableElement>) {
  return (
    // A scrollable region must be reachable by keyboard (WCAG 2.1.1): tabIndex 0 and a name.
    <div role="region" aria-label={props["aria-label"] ?? "Table"} tabIndex={0} className="max-w-full overflow-x-auto">
      <table className={className} {...props} />
    </div>
  );
}
