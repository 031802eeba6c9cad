import { escapePointerSegment } from "./pointer";
/** A field-by-field structural diff of two JSON values, by JSON Pointer. Browser-safe. */
export interface Difference {
  path: string;
  kind: "added" | "removed" | "changed";
  left?: unknown;
  right?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const escape = escapePointerSegment;

export function diffJson(left: unknown, right: unknown, path = ""): Difference[] {
  if (isObject(left) && isObject(right)) {
    const keys = [...new Set([...Object.keys(left), ...Object.keys(right)])];
    return keys.flatMap((k) => {
      const at = `${path}/${escape(k)}`;
      if (!Object.hasOwn(right, k)) return [{ path: at, kind: "removed" as const, left: left[k] }];
      if (!Object.hasOwn(left, k)) return [{ path: at, kind: "added" as const, right: right[k] }];
      return diffJson(left[k], right[k], at);
    });
  }
  if (Array.isArray(left) && Array.isArray(right)) {
    const n = Math.max(left.length, right.length);
    return Array.from({ length: n }, (_, i) => {
      const at = `${path}/${i}`;
      if (i >= right.length) return [{ path: at, kind: "removed" as const, left: left[i] }];
      if (i >= left.length) return [{ path: at, kind: "added" as const, right: right[i] }];
      return diffJson(left[i], right[i], at);
    }).flat();
  }
  return Object.is(left, right) ? [] : [{ path: path || "/", kind: "changed", left, right }];
}
