"use client";

import { useRef, type ReactNode } from "react";
import { unescapePointerSegment } from "@/lib/json/pointer";
import type { PrettyLines } from "@/lib/json/pretty-lines";
import { Badge } from "../../ui/badge";
import { colourLine } from "./live-json-view";
import { VirtualLines } from "./virtual-lines";

type FieldState = "pending" | "streaming" | "done" | "stopped";
const TONE = { done: "success", streaming: "info", pending: "neutral", stopped: "warning" } as const;

interface Props {
  doc: PrettyLines;
  version: number;
  schema: unknown;
  /** Pointers of the values that have closed (the parser's, shared and growing). */
  closed: ReadonlySet<string>;
  /** How the run ended: every field done, or the unfinished ones stopped; null while it runs. */
  ended: "done" | "stopped" | null;
}

/** The sub-schema at a JSON Pointer, following properties and items only (enough for `required`). */
function schemaAt(schema: unknown, path: string): { properties?: Record<string, unknown>; required?: string[]; items?: unknown } | undefined {
  let s = schema as { properties?: Record<string, unknown>; items?: unknown } | undefined;
  for (const segment of path.split("/").slice(1)) {
    if (!s || typeof s !== "object") return undefined;
    const key = unescapePointerSegment(segment);
    s = (/^\d+$/.test(key) && s.items !== undefined ? s.items : s.properties?.[key]) as typeof s;
  }
  return s as never;
}

/**
 * The field view of a long or streaming object: each line of the document with the state of the
 * value it starts (done, streaming, pending, stopped), and under an object's first line the
 * required fields not written yet. Like LiveJsonView it draws only what is on screen; an object's
 * missing fields are worked out when its line is drawn, once for an object that has closed.
 */
export function LiveFieldsView({ doc, version, schema, closed, ended }: Props) {
  // Per line: the missing fields of an object that has closed, and the rows that can no longer
  // change (a finished line whose value is done, or a closing line) — the same element each time,
  // which React skips, so that a batch draws only the rows it added or changed.
  const missingCache = useRef<{ doc: PrettyLines; schema: unknown; ended: Props["ended"]; byLine: Map<number, string[]>; rows: Map<number, ReactNode> }>({ doc, schema, ended, byLine: new Map(), rows: new Map() });
  if (missingCache.current.doc !== doc || missingCache.current.schema !== schema) missingCache.current = { doc, schema, ended, byLine: new Map(), rows: new Map() };
  else if (missingCache.current.ended !== ended) missingCache.current = { ...missingCache.current, ended, rows: new Map() };
  const lastPath = doc.path(doc.count - 1).replace(/#end$/, "");
  const active = ended === null ? lastPath : null;
  const state = (path: string): FieldState => {
    if (ended === "done" || closed.has(path)) return "done";
    if (ended === "stopped") return "stopped";
    return active !== null && (active === path || active.startsWith(`${path}/`)) ? "streaming" : "pending";
  };
  const missing = (i: number): string[] => {
    const hit = missingCache.current.byLine.get(i);
    if (hit) return hit;
    const path = doc.path(i);
    const required = schemaAt(schema, path)?.required ?? [];
    if (required.length === 0 || !doc.line(i).endsWith("{")) return [];
    const end = doc.foldEnd(i);
    const depth = doc.depth(i) + 1;
    const present = new Set<string>();
    const wanted = new Set(required);
    // Stops once every required field is seen: an open object at the top of a long stream (the root)
    // is not scanned to the document's end on every batch.
    for (let j = i + 1; j < (end === -1 ? doc.count : end) && wanted.size > 0; j++) {
      if (doc.depth(j) !== depth) continue;
      const p = doc.path(j);
      if (p.endsWith("#end")) continue;
      const key = unescapePointerSegment(p.slice(path.length + 1));
      present.add(key);
      wanted.delete(key);
    }
    const result = required.filter((k) => !present.has(k));
    if (end !== -1) missingCache.current.byLine.set(i, result);
    return result;
  };
  const row = (i: number): ReactNode => {
    const hit = missingCache.current.rows.get(i);
    if (hit !== undefined) return hit;
    const path = doc.path(i);
    const text = doc.line(i);
    const indent = "  ".repeat(doc.depth(i));
    const starts = !path.endsWith("#end");
    const s = starts ? state(path) : null;
    const absent = starts ? missing(i) : [];
    const node = (
      <span data-path={path}>
        {indent}
        {colourLine(text.slice(indent.length))}
        {s ? (
          <Badge className="ml-2" tone={TONE[s]}>
            {s}
          </Badge>
        ) : null}
        {absent.length > 0 ? (
          <Badge className="ml-2" tone="warning">
            {`${absent.join(", ")}: ${ended === "stopped" ? "required, never written" : "required, not written yet"}`}
          </Badge>
        ) : null}
      </span>
    );
    // Final: a finished line, done or closing, whose missing fields (if an object's) are those of a closed object.
    const final = i < doc.lines.length && (s === null || s === "done") && (!doc.line(i).endsWith("{") || doc.foldEnd(i) !== -1);
    if (final) missingCache.current.rows.set(i, node);
    return node;
  };
  return <VirtualLines count={doc.count} version={version} row={row} follow={ended === null} data-testid="result-fields" />;
}
