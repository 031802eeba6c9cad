"use client";

import { useMemo, useRef, useState, type ReactNode } from "react";
import type { PrettyLines } from "@/lib/json/pretty-lines";
import { COLOURS, TONES, type JsonMark } from "../../ui/json-view";
import { VirtualLines } from "./virtual-lines";

const TOKEN = /("(?:[^"\\]|\\.)*"?)(\s*:\s)?|(-?\d[\d.eE+-]*)|(true|false|null)|([[\]{},:]|…)|(\s+)|(.)/g;

/** One line of pretty JSON, coloured: keys, strings, numbers, literals and punctuation. */
export function colourLine(text: string): ReactNode[] {
  const out: ReactNode[] = [];
  TOKEN.lastIndex = 0;
  let m: RegExpExecArray | null;
  let n = 0;
  while ((m = TOKEN.exec(text)) !== null) {
    if (m[1] !== undefined) {
      if (m[2] !== undefined) {
        out.push(<span key={n++} className={COLOURS.key}>{m[1]}</span>, <span key={n++} className={COLOURS.punctuation}>{m[2]}</span>);
      } else out.push(<span key={n++} className={COLOURS.string}>{m[1]}</span>);
    } else if (m[3] !== undefined) out.push(<span key={n++} className={COLOURS.number}>{m[3]}</span>);
    else if (m[4] !== undefined) out.push(<span key={n++} className={COLOURS.literal}>{m[4]}</span>);
    else if (m[5] !== undefined) out.push(<span key={n++} className={COLOURS.punctuation}>{m[5]}</span>);
    else out.push(m[0]);
  }
  return out;
}

/** Lines shown when some containers are folded: each folded opener stands for its whole block. */
function visibleLines(doc: PrettyLines, folded: ReadonlySet<number>): number[] | null {
  if (folded.size === 0) return null;
  const shown: number[] = [];
  for (let i = 0; i < doc.count; i++) {
    shown.push(i);
    const end = doc.foldEnd(i);
    if (end > i && folded.has(i)) i = end;
  }
  return shown;
}

interface Props {
  doc: PrettyLines;
  /** The document's version when the run state was published (the document itself is shared and grows). */
  version: number;
  marks?: ReadonlyMap<string, JsonMark>;
  /** The stream is writing: a caret at the end, and the view keeps to the end. */
  streaming: boolean;
  "data-testid"?: string;
}

/**
 * A streamed object as indented, coloured JSON, drawn from `PrettyLines`: each delta costs work
 * proportional to itself, each line is coloured once (when it is finished), only the lines on
 * screen are in the DOM, and objects and arrays fold from a gutter. Places in `marks` are marked
 * with their note, as in JsonView (which shows small, finished values).
 */
export function LiveJsonView({ doc, version, marks, streaming, ...rest }: Props) {
  const [folded, setFolded] = useState<{ doc: PrettyLines; lines: ReadonlySet<number> }>({ doc, lines: new Set() });
  const foldedLines = folded.doc === doc ? folded.lines : new Set<number>();
  // Rows of finished lines, by line: the same element while the line, its fold and its marks stay
  // the same, so that React skips it and a batch draws only the rows it added or changed.
  const cache = useRef<{ doc: PrettyLines; marks: unknown; parts: Map<number, ReactNode[]>; rows: Map<number, { end: number; folded: boolean; node: ReactNode }> }>({ doc, marks, parts: new Map(), rows: new Map() });
  if (cache.current.doc !== doc || cache.current.marks !== marks) cache.current = { doc, marks, parts: new Map(), rows: new Map() };
  // Recomputed only when something is folded (then in proportion to the document, once per update).
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const shown = useMemo(() => visibleLines(doc, foldedLines), [doc, foldedLines, version]);
  // Reads the folds when pressed (not when drawn): a cached row's button stays right.
  const toggle = (line: number) =>
    setFolded((prev) => {
      const next = new Set(prev.doc === doc ? prev.lines : []);
      if (!next.delete(line)) next.add(line);
      return { doc, lines: next };
    });

  const coloured = (i: number): ReactNode[] => {
    const finished = i < doc.lines.length;
    const hit = finished ? cache.current.parts.get(i) : undefined;
    if (hit) return hit;
    const text = doc.line(i);
    const depth = doc.depth(i);
    const indent = "  ".repeat(depth);
    const body = text.slice(indent.length);
    const mark = marks?.get(doc.path(i));
    const parts: ReactNode[] = [indent];
    parts.push(
      <span key="v" className={mark ? `rounded-sm ${TONES[mark.tone]}` : undefined} title={mark?.note}>
        {colourLine(body)}
      </span>,
    );
    if (mark?.tone === "danger") parts.push(<span key="n" className="ml-2 font-sans text-xs text-red-800 dark:text-red-300">← {mark.note}</span>);
    else if (mark) parts.push(<span key="n" className="sr-only"> ({mark.note})</span>);
    if (finished) cache.current.parts.set(i, parts);
    return parts;
  };

  const draw = (i: number, end: number, isFolded: boolean, caret: boolean): ReactNode => {
    const path = doc.path(i);
    return (
      <>
        <span className="w-5 shrink-0 select-none text-center">
          {end > i ? (
            <button
              type="button"
              onClick={() => toggle(i)}
              aria-expanded={!isFolded}
              aria-label={`${isFolded ? "Unfold" : "Fold"} ${path || "the whole value"}`}
              className="rounded text-xs leading-none text-zinc-600 hover:bg-zinc-200 dark:text-zinc-400 dark:hover:bg-zinc-700"
            >
              {isFolded ? "▸" : "▾"}
            </button>
          ) : null}
        </span>
        <span data-path={path}>
          {coloured(i)}
          {isFolded ? (
            <>
              <span className={COLOURS.punctuation}>{`…${doc.line(end).trim()}`}</span>
              <span className="ml-2 font-sans text-xs text-zinc-600 dark:text-zinc-400">{end - i - 1} lines</span>
            </>
          ) : null}
          {caret ? <Caret /> : null}
        </span>
      </>
    );
  };

  const count = shown ? shown.length : doc.count;
  const row = (r: number): ReactNode => {
    const i = shown ? shown[r]! : r;
    const end = doc.foldEnd(i);
    const isFolded = end > i && foldedLines.has(i);
    // The line being written (the last) changes with every batch, and carries the caret.
    if (i >= doc.lines.length) return draw(i, end, isFolded, streaming);
    const hit = cache.current.rows.get(i);
    if (hit && hit.end === end && hit.folded === isFolded) return hit.node;
    const node = draw(i, end, isFolded, false);
    cache.current.rows.set(i, { end, folded: isFolded, node });
    return node;
  };
  return <VirtualLines count={count} version={version + foldedLines.size} row={row} follow={streaming} {...rest} />;
}

/** Where a stream is writing. */
function Caret() {
  return <span aria-hidden className="ml-px inline-block h-[1.1em] w-[0.5ch] translate-y-[0.15em] animate-pulse bg-blue-600 dark:bg-blue-400" />;
}
