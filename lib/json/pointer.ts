/** JSON Pointer (RFC 6901). Browser-safe; part of the bottom layer. */

/** One reference token, escaped: `~` as `~0`, `/` as `~1`. */
export const escapePointerSegment = (segment: string | number): string => String(segment).replace(/~/g, "~0").replace(/\//g, "~1");

/** One reference token, unescaped: `~1` as `/`, then `~0` as `~` (so `~01` is `~1`). */
export const unescapePointerSegment = (segment: string): string => segment.replace(/~1/g, "/").replace(/~0/g, "~");

/** The pointer for a path of keys and indexes (`[]` is the whole document, ""). */
export function toPointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => `/${escapePointerSegment(s)}`).join("");
}

/** The keys of a pointer, unescaped (`""` is the whole document, `[]`). */
export function parsePointer(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer.slice(1).split("/").map(unescapePointerSegment);
}

/**
 * What a local JSON Schema reference points at in `root`: `#` (the root) or `#/a/b` (a URI fragment:
 * percent-encoded, then a JSON Pointer), following own keys only; with the keys it went through.
 * Undefined for anything else (`#name` anchors, other documents) and for a pointer to nothing.
 */
export function resolveLocalRef(root: unknown, ref: string): { value: unknown; segments: string[] } | undefined {
  if (ref === "#") return { value: root, segments: [] };
  if (!ref.startsWith("#/")) return undefined;
  let segments: string[];
  try {
    segments = parsePointer(decodeURIComponent(ref.slice(1)));
  } catch {
    return undefined; // malformed percent-encoding
  }
  let value: unknown = root;
  for (const segment of segments) {
    if (value === null || typeof value !== "object" || !Object.prototype.hasOwnProperty.call(value, segment)) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return { value, segments };
}
