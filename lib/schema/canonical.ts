import "server-only";
import { createHash } from "node:crypto";

/** JSON with object keys sorted, so equal schemas hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

export const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

export const schemaHash = (schema: unknown): string => sha256(canonicalJson(schema));
