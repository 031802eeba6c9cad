import "server-only";
/** What the first bytes of a file say it is, for the types genserve cares about; null when unsure. */
export function sniff(bytes: Uint8Array): string | null {
  const starts = (...sig: number[]) => sig.every((b, i) => bytes[i] === b);
  if (starts(0x25, 0x50, 0x44, 0x46, 0x2d)) return "application/pdf";
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (starts(0x47, 0x49, 0x46, 0x38)) return "image/gif";
  if (starts(0x52, 0x49, 0x46, 0x46) && bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50) return "image/webp";
  if (starts(0x50, 0x4b, 0x03, 0x04)) return "application/zip";
  return null;
}

const BINARY_FAMILIES: Record<string, string[]> = {
  "application/pdf": ["application/pdf"],
  "image/png": ["image/png"],
  "image/jpeg": ["image/jpeg", "image/jpg", "image/pjpeg"],
  "image/gif": ["image/gif"],
  "image/webp": ["image/webp"],
  // DOCX, XLSX, ... are zip files.
  "application/zip": ["application/zip", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"],
};

/** Whether a declared type contradicts what the bytes clearly are (a "PDF" that is a PNG). */
export function contradicts(declared: string, sniffed: string | null): boolean {
  if (sniffed === null) {
    // Bytes with no known signature cannot be a PDF or an image, whatever the declaration says.
    return Object.values(BINARY_FAMILIES).some((family) => family.includes(declared) && declared !== "application/zip");
  }
  return !(BINARY_FAMILIES[sniffed] ?? []).includes(declared);
}
