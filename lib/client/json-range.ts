/**
 * Where a JSON Pointer points in a JSON text, for editor markers: the property's name when it has
 * one (what a message is about), else the value; the nearest existing parent when the pointer goes
 * further than the text; the start when nothing matches. Browser-safe.
 */
import { findNodeAtLocation, parseTree } from "jsonc-parser";
import { unescapePointerSegment } from "../json/pointer";

export function rangeOf(text: string, pointer: string): { offset: number; length: number } {
  const tree = parseTree(text);
  if (!tree) return { offset: 0, length: 0 };
  const segments = pointer
    .split("/")
    .slice(1)
    .map(unescapePointerSegment)
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  for (let n = segments.length; n >= 0; n--) {
    const node = findNodeAtLocation(tree, segments.slice(0, n));
    if (node) {
      const target = node.parent?.type === "property" && node.parent.children?.[0] ? node.parent.children[0] : node;
      return { offset: target.offset, length: Math.max(1, target.length) };
    }
  }
  return { offset: 0, length: 1 };
}
