/** JSON Pointer (RFC 6901). Browser-safe; part of the bottom layer. */

/** One reference token, escaped: `~` as `~0`, `/` as `~1`. */
export const escapePointerSegment = (segment: string | number): string => String(segment).replace(/~/g, "~0").replace(/\//g, "~1");

/** The pointer for a path of keys and indexes (`[]` is the whole document, ""). */
export function toPointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => `/${escapePointerSegment(s)}`).join("");
}

/** The keys of a pointer, unescaped (`""` is the whole document, `[]`). */
export function parsePointer(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer.slice(1).split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}
