import "server-only";
import type { z } from "zod";
import { dedupeFieldErrors, GenserveError, validationError, zodFieldErrors, type FieldError } from "../errors";
import { findTooDeep } from "../json/depth";
import { toPointer } from "../json/pointer";

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;.*)?$/i;

/**
 * Reads a JSON request body, enforcing the media type (415) and the size limit (413) while reading:
 * a large body is refused by its Content-Length, or as soon as it passes the limit, never buffered
 * whole. Nesting deeper than `maxDepth` is a 400 naming where.
 */
export async function readJsonBody(request: Request, limitBytes: number, maxDepth = 128): Promise<unknown> {
  const type = request.headers.get("content-type");
  if (!type || !JSON_TYPE.test(type)) {
    throw new GenserveError("unsupported_media_type", {
      detail: `Send the body as JSON with Content-Type: application/json${type ? ` (got ${type.slice(0, 100)})` : ""}.`,
    });
  }
  const text = await readBodyText(request, limitBytes, "limits.bodyBytes");
  if (text.trim() === "") throw validationError([{ path: "", message: "the request body is empty; send a JSON object" }]);
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    throw validationError([{ path: "", message: `malformed JSON: ${(error as Error).message}` }]);
  }
  // JSON.parse accepts any nesting; everything after it (validation, hashing, storing) may recurse.
  const tooDeep = findTooDeep(value, maxDepth);
  if (tooDeep) throw validationError([{ path: toPointer(tooDeep), message: `nests deeper than ${maxDepth} levels (limits.jsonDepth)` }]);
  return value;
}

/** The body as text, refused (413) by its Content-Length or as soon as it passes `limitBytes`. */
export async function readBodyText(request: Request, limitBytes: number, limitName: string): Promise<string> {
  const tooLarge = () => new GenserveError("payload_too_large", { detail: `The request body is larger than the limit of ${limitBytes} bytes (${limitName}).` });
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limitBytes) throw tooLarge();
  if (Number.isFinite(declared)) {
    // A declared length within the limit: HTTP's parser delivers exactly that many bytes, so the
    // body is read whole — from the connection directly by the API's server (its Request reads
    // `text()` without building a web stream), which costs less than reading a stream.
    const text = await request.text();
    if (Buffer.byteLength(text) > limitBytes) throw tooLarge();
    return text;
  }

  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limitBytes) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge();
      }
      chunks.push(value);
    }
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Validates a parsed body against a request shape; every problem is named by its JSON Pointer.
 * `more` are problems found by checks the shape cannot express (a caller's JSON Schema), so one
 * 400 lists them all.
 */
export function parseWith<T extends z.ZodType>(schema: T, value: unknown, more: FieldError[] = []): z.infer<T> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw validationError([{ path: "", message: "the body must be a JSON object" }]);
  }
  const result = schema.safeParse(value, { reportInput: true });
  const errors = [...(result.success ? [] : zodFieldErrors(result.error)), ...more];
  if (errors.length > 0 || !result.success) throw validationError(dedupeFieldErrors(errors));
  return result.data;
}
