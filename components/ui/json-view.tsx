"use client";

import { useState, type ReactNode } from "react";
import { escapePointerSegment } from "@/lib/json/pointer";

/** How a place in the value is marked: a failing field, or one that differs from another output. */
export interface JsonMark {
  tone: "danger" | "changed";
  note: string;
}

interface Props {
  value: unknown;
  /** Places to mark, by JSON Pointer ("" is the whole value). */
  marks?: ReadonlyMap<string, JsonMark>;
  /** The place being written while a stream runs: a caret follows it. */
  caret?: string | null;
  "data-testid"?: string;
  className?: string;
}

/** How a marked place is shown, by tone (the live output views use the same). */
export const TONES: Record<JsonMark["tone"], string> = {
  danger: "bg-red-100 underline decoration-red-600 decoration-wavy underline-offset-2 dark:bg-red-950 dark:decoration-red-400",
  changed: "bg-amber-100 dark:bg-amber-900/60",
};

/** JSON's colours: keys, strings, numbers, literals and punctuation (the live output views use the same). */
export const COLOURS = {
  key: "text-sky-800 dark:text-sky-300",
  string: "text-green-800 dark:text-green-300",
  number: "text-amber-800 dark:text-amber-300",
  literal: "text-purple-700 dark:text-purple-300",
  punctuation: "text-zinc-600 dark:text-zinc-400",
} as const;

const isContainer = (v: unknown): v is object => v !== null && typeof v === "object";

/** An output's failing places (the problems of `output_invalid`), to mark: "/" is the whole value. */
export function problemMarks(problems: readonly { path: string; message: string }[]): Map<string, JsonMark> {
  const marks = new Map<string, JsonMark>();
  for (const p of problems) {
    const at = p.path === "/" ? "" : p.path;
    const note = marks.get(at)?.note;
    marks.set(at, { tone: "danger", note: note ? `${note}; ${p.message}` : p.message });
  }
  return marks;
}

/**
 * A JSON value for reading (on a projector too): indented as JSON.stringify(value, null, 2) writes
 * it, in colour, objects and arrays folding from a gutter, and chosen places marked with a note. The
 * text copies as JSON.
 */
export function JsonView({ value, marks, caret = null, className = "", ...rest }: Props) {
  const [folded, setFolded] = useState<ReadonlySet<string>>(new Set());
  const toggle = (path: string) =>
    setFolded((prev) => {
      const next = new Set(prev);
      if (!next.delete(path)) next.add(path);
      return next;
    });
  const lines: ReactNode[] = [];
  const line = (path: string, depth: number, content: ReactNode, fold?: { open: boolean }) => {
    const mark = marks?.get(path);
    lines.push(
      <div key={`${path}|${lines.length}`} className="flex" data-path={path} data-mark={mark?.tone}>
        <span className="w-5 shrink-0 select-none text-center">
          {fold ? (
            <button
              type="button"
              onClick={() => toggle(path)}
              aria-expanded={fold.open}
              aria-label={`${fold.open ? "Fold" : "Unfold"} ${path || "the whole value"}`}
              className="rounded text-xs leading-none text-zinc-600 hover:bg-zinc-200 dark:text-zinc-400 dark:hover:bg-zinc-700"
            >
              {fold.open ? "▾" : "▸"}
            </button>
          ) : null}
        </span>
        <span className="min-w-0 whitespace-pre-wrap [overflow-wrap:anywhere]">
          {"  ".repeat(depth)}
          <span className={mark ? `rounded-sm ${TONES[mark.tone]}` : undefined} title={mark?.note}>
            {content}
          </span>
          {mark?.tone === "danger" ? (
            <span className="ml-2 font-sans text-xs text-red-800 dark:text-red-300">← {mark.note}</span>
          ) : mark ? (
            <span className="sr-only"> ({mark.note})</span>
          ) : null}
        </span>
      </div>,
    );
  };
  const keyOf = (key: string | null) =>
    key === null ? null : (
      <>
        <span className={COLOURS.key}>{JSON.stringify(key)}</span>
        <span className={COLOURS.punctuation}>: </span>
      </>
    );
  const walk = (key: string | null, v: unknown, path: string, depth: number, comma: boolean) => {
    const tail = comma ? <span className={COLOURS.punctuation}>,</span> : null;
    const cursor = caret === path ? <Caret /> : null;
    if (!isContainer(v)) {
      line(
        path,
        depth,
        <>
          {keyOf(key)}
          <Scalar value={v} />
          {cursor}
          {tail}
        </>,
      );
      return;
    }
    const entries: [string, unknown][] = Array.isArray(v) ? v.map((x, i) => [String(i), x]) : Object.entries(v);
    const [open, close] = Array.isArray(v) ? ["[", "]"] : ["{", "}"];
    if (entries.length === 0) {
      line(path, depth, <>{keyOf(key)}<span className={COLOURS.punctuation}>{open + close}</span>{cursor}{tail}</>);
      return;
    }
    if (folded.has(path)) {
      const count = `${entries.length} ${Array.isArray(v) ? (entries.length === 1 ? "item" : "items") : entries.length === 1 ? "key" : "keys"}`;
      line(path, depth, <>{keyOf(key)}<span className={COLOURS.punctuation}>{`${open}…${close}`}</span>{tail}<span className="ml-2 text-xs text-zinc-600 dark:text-zinc-400">{count}</span></>, { open: false });
      return;
    }
    line(path, depth, <>{keyOf(key)}<span className={COLOURS.punctuation}>{open}</span></>, { open: true });
    entries.forEach(([k, x], i) => walk(Array.isArray(v) ? null : k, x, `${path}/${escapePointerSegment(k)}`, depth + 1, i < entries.length - 1));
    line(`${path}#end`, depth, <><span className={COLOURS.punctuation}>{close}</span>{cursor}{tail}</>);
  };
  walk(null, value, "", 0, false);
  return (
    <div className={`font-mono text-sm leading-relaxed ${className}`} {...rest}>
      {lines}
    </div>
  );
}

function Scalar({ value }: { value: unknown }) {
  if (typeof value === "string") return <span className={COLOURS.string}>{JSON.stringify(value)}</span>;
  if (typeof value === "number") return <span className={COLOURS.number}>{String(value)}</span>;
  return <span className={COLOURS.literal}>{JSON.stringify(value) ?? "undefined"}</span>;
}

/** Where a stream is writing. */
function Caret() {
  return <span aria-hidden className="ml-px inline-block h-[1.1em] w-[0.5ch] translate-y-[0.15em] animate-pulse bg-blue-600 dark:bg-blue-400" />;
}
