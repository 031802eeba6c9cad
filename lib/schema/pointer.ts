/** JSON Pointer (RFC 6901) for a path of keys and indexes. */
export function toPointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => `/${String(s).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}
