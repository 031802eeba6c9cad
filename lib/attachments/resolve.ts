import "server-only";
import { createHash } from "node:crypto";
import type { AttachmentInput, AttachmentMeta } from "../domain/run-vocabulary";
import type { DocumentExtractor } from "./extract";
import { fetchAttachment } from "./fetch-url";
import { contradicts, sniff } from "./sniff";
import type { Limits } from "../config/schema";
import { GenserveError, validationError } from "../errors";

export interface PromptAttachment {
  index: number;
  mimeType: string;
  text: string;
}

export interface ImageAttachment {
  index: number;
  mimeType: string;
  data: Uint8Array;
}

export interface ResolvedAttachments {
  meta: AttachmentMeta[];
  /** Text-like material, placed in the prompt. */
  prompt: PromptAttachment[];
  /** Images, passed to vision models as image parts. */
  images: ImageAttachment[];
}

const TEXT_TYPES = /^(?:text\/[\w.+-]+|application\/(?:json|xml|yaml|x-yaml|x-ndjson|[\w.-]+\+(?:json|xml)))$/i;
const IMAGE_TYPES = /^image\/(?:png|jpeg|gif|webp)$/i;
const DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
export const SUPPORTED_ATTACHMENT_TYPES =
  "text/* (plain, markdown, csv, ...), text/html (tags stripped), application/json, application/xml, application/yaml, PDF and DOCX (text extracted), and images (png, jpeg, gif, webp) for vision models";
// Linear-time checks on strings of many megabytes: one character class, no repeated groups (a
// group repeated per 4 characters overflowed the regex engine's backtracking stack at ~4 MiB).
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;
const DATA_URL_HEAD = /^data:([\w.+-]+\/[\w.+-]+)?((?:;[\w-]+=[^;,]*)*);base64$/;

export interface AttachmentOptions {
  limits: Pick<Limits, "attachments" | "attachmentBytes" | "attachmentsTotalBytes" | "attachmentFetchTimeoutMs">;
  allowPrivate: boolean;
  model: { alias: string; vision: boolean };
  /** Reads documents (DOCX, PDF, HTML) off the event loop, within limits. */
  extractor: DocumentExtractor;
  /** Whose request this is: document reading is shared out in turn between keys. */
  owner?: string;
}

/** Standard base64 (whitespace ignored) decoded, or null when it is not valid base64. */
function decodeBase64(payload: string): Buffer | null {
  const compact = /\s/.test(payload) ? payload.replace(/\s+/g, "") : payload;
  if (compact.length % 4 !== 0 || !BASE64_CHARS.test(compact)) return null;
  return Buffer.from(compact, "base64");
}

/** The parts of a base64 data: URL (`data:<type>;base64,<payload>`), or null when it is not one. */
function parseDataUrl(file: string): { type?: string; payload: string } | null {
  if (!file.startsWith("data:")) return null;
  const comma = file.indexOf(",");
  const head = comma < 0 ? null : DATA_URL_HEAD.exec(file.slice(0, comma));
  if (!head) return null;
  return { type: head[1], payload: file.slice(comma + 1) };
}

const bareType = (type: string) => type.split(";")[0]!.trim().toLowerCase();

/**
 * Turns a request's attachments into prompt material: inline content (standard base64 or a base64
 * data: URL) or http(s) URLs fetched safely; text-like files decoded, HTML reduced to its text,
 * images passed to vision models. The run keeps only metadata (sizes, sha256), never the bytes.
 */
export async function resolveAttachments(inputs: readonly AttachmentInput[] | undefined, options: AttachmentOptions): Promise<ResolvedAttachments> {
  const list = inputs ?? [];
  const { limits } = options;
  if (list.length > limits.attachments) {
    throw new GenserveError("payload_too_large", { detail: `${list.length} attachments sent; the limit is ${limits.attachments} (limits.attachments).` });
  }
  const resolved: ResolvedAttachments = { meta: [], prompt: [], images: [] };
  let total = 0;
  for (const [index, attachment] of list.entries()) {
    const path = `/attachments/${index}`;
    let bytes: Buffer;
    let type: string | undefined = attachment.mimeType && bareType(attachment.mimeType);
    let source: AttachmentMeta["source"] = "inline";
    let url: string | undefined;
    if (/^https?:\/\//i.test(attachment.file)) {
      source = "url";
      url = withoutCredentials(attachment.file, index);
      const fetched = await fetchAttachment(url, index, {
        allowPrivate: options.allowPrivate,
        maxBytes: Math.min(limits.attachmentBytes, limits.attachmentsTotalBytes - total),
        timeoutMs: limits.attachmentFetchTimeoutMs,
        maxRedirects: 3,
      });
      bytes = fetched.bytes;
      type ??= fetched.contentType ? bareType(fetched.contentType) : undefined;
    } else {
      let payload = attachment.file;
      const dataUrl = parseDataUrl(attachment.file);
      if (dataUrl) {
        type ??= dataUrl.type && bareType(dataUrl.type);
        payload = dataUrl.payload;
      }
      if (!type) throw validationError([{ path: `${path}/mimeType`, message: "is required for inline content" }]);
      const decoded = decodeBase64(payload);
      if (!decoded) throw validationError([{ path: `${path}/file`, message: "is not valid standard base64 (or a base64 data: URL)" }]);
      bytes = decoded;
      if (bytes.byteLength > limits.attachmentBytes) {
        throw new GenserveError("payload_too_large", { detail: `attachments[${index}] is ${bytes.byteLength} bytes; the limit is ${limits.attachmentBytes} bytes (limits.attachmentBytes).` });
      }
    }
    total += bytes.byteLength;
    if (total > limits.attachmentsTotalBytes) {
      throw new GenserveError("payload_too_large", { detail: `attachments add up to more than ${limits.attachmentsTotalBytes} bytes (limits.attachmentsTotalBytes).` });
    }

    const sniffed = sniff(bytes);
    if (type && attachment.mimeType && contradicts(type, sniffed)) {
      throw validationError([{ path: `${path}/mimeType`, message: `says ${type} but the content is ${sniffed ?? "not that type"}` }]);
    }
    type ??= sniffed ?? "application/octet-stream";

    let text = "";
    const document = type === "text/html" ? "html" : type === "application/pdf" ? "pdf" : type === DOCX ? "docx" : null;
    if (document) {
      text = await options.extractor.text(document, bytes, index, options.owner);
      resolved.prompt.push({ index, mimeType: type, text });
    } else if (TEXT_TYPES.test(type)) {
      text = decodeUtf8(bytes, index, type);
      resolved.prompt.push({ index, mimeType: type, text });
    } else if (IMAGE_TYPES.test(type)) {
      if (!options.model.vision) {
        throw new GenserveError("attachment_unsupported", {
          detail: `attachments[${index}] is an image (${type}) and the workflow's model "${options.model.alias}" is not configured with vision: true.`,
          errors: [{ path: `${path}/file`, message: `images need a vision model; "${options.model.alias}" is not one` }],
        });
      }
      if (sniffed !== null && sniffed !== type && !(type === "image/jpg" && sniffed === "image/jpeg")) {
        throw validationError([{ path: `${path}/mimeType`, message: `says ${type} but the content is ${sniffed}` }]);
      }
      resolved.images.push({ index, mimeType: type, data: new Uint8Array(bytes) });
    } else {
      throw new GenserveError("unsupported_media_type", {
        detail: `attachments[${index}] is ${type}; supported types are ${SUPPORTED_ATTACHMENT_TYPES}.`,
        errors: [{ path: `${path}/mimeType`, message: `${type} is not supported (supported: ${SUPPORTED_ATTACHMENT_TYPES})` }],
      });
    }
    resolved.meta.push({
      index,
      source,
      ...(url !== undefined && { url }),
      mimeType: type,
      bytes: bytes.byteLength,
      sha256: createHash("sha256").update(bytes).digest("hex"),
      textChars: text.length,
    });
  }
  return resolved;
}

function decodeUtf8(bytes: Buffer, index: number, type: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw validationError([{ path: `/attachments/${index}/file`, message: `declared ${type} but is not valid UTF-8 text` }]);
  }
}

/**
 * An attachment URL as it is fetched and recorded: credentials (`user:pass@`) are never sent and
 * never stored. A URL that does not parse is a 400 naming the attachment.
 */
function withoutCredentials(raw: string, index: number): string {
  // URL parsing silently drops tabs and newlines ("exa\tmple.com" becomes "example.com"): a URL
  // that needs such repair is refused, so that what is fetched is what was sent.
  if (/[\u0000-\u0020\u007f]/.test(raw)) {
    throw validationError([{ path: `/attachments/${index}/file`, message: "is not a valid URL (it contains spaces or control characters; percent-encode them)" }]);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw validationError([{ path: `/attachments/${index}/file`, message: "is not a valid URL" }]);
  }
  url.username = "";
  url.password = "";
  return url.toString();
}
