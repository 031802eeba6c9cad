import { createHash } from "node:crypto";
import type { AttachmentInput } from "../api/requests";
import { GenserveError, validationError } from "../errors";
import type { AttachmentMeta } from "../store/types";

export interface PromptAttachment {
  index: number;
  mimeType: string;
  text: string;
}

export interface ResolvedAttachments {
  meta: AttachmentMeta[];
  prompt: PromptAttachment[];
}

const TEXT_TYPES = /^(?:text\/[\w.+-]+|application\/(?:json|xml|yaml|x-yaml|x-ndjson|[\w.-]+\+(?:json|xml)))$/i;
export const SUPPORTED_ATTACHMENT_TYPES = "text/* (plain, markdown, csv, html, ...), application/json, application/xml, application/yaml";
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DATA_URL = /^data:([\w.+-]+\/[\w.+-]+)?((?:;[\w-]+=[^;,]*)*);base64,(.*)$/s;

/**
 * Decodes inline attachments (standard base64 or a base64 data: URL) and turns text-like ones into
 * prompt material. This is the first stage of attachment handling: files fetched by URL and
 * extraction from PDF, DOCX and images are refused with a clear error until they are supported.
 */
export function resolveAttachments(inputs: readonly AttachmentInput[] | undefined, maxCount: number): ResolvedAttachments {
  const list = inputs ?? [];
  if (list.length > maxCount) {
    throw new GenserveError("payload_too_large", { detail: `${list.length} attachments sent; the limit is ${maxCount} (limits.attachments).` });
  }
  const meta: AttachmentMeta[] = [];
  const prompt: PromptAttachment[] = [];
  list.forEach((attachment, index) => {
    const path = `/attachments/${index}`;
    if (/^https?:\/\//i.test(attachment.file)) {
      throw validationError([{ path: `${path}/file`, message: "attachments by URL are not fetched yet; send the content inline (base64 or a data: URL)" }]);
    }
    let mimeType = attachment.mimeType;
    let payload = attachment.file;
    const dataUrl = DATA_URL.exec(attachment.file);
    if (dataUrl) {
      mimeType ??= dataUrl[1];
      payload = dataUrl[3] ?? "";
    }
    if (!mimeType) throw validationError([{ path: `${path}/mimeType`, message: "is required for inline content" }]);
    const compact = payload.replace(/\s+/g, "");
    if (!BASE64.test(compact)) throw validationError([{ path: `${path}/file`, message: "is not valid standard base64 (or a base64 data: URL)" }]);
    const bytes = Buffer.from(compact, "base64");
    const normalisedType = mimeType.toLowerCase();
    if (!TEXT_TYPES.test(normalisedType)) {
      throw new GenserveError("unsupported_media_type", {
        detail: `attachments[${index}] is ${mimeType}; supported types are ${SUPPORTED_ATTACHMENT_TYPES}.`,
        errors: [{ path: `${path}/mimeType`, message: `${mimeType} is not supported (supported: ${SUPPORTED_ATTACHMENT_TYPES})` }],
      });
    }
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw validationError([{ path: `${path}/file`, message: `declared ${mimeType} but is not valid UTF-8 text` }]);
    }
    meta.push({
      index,
      source: "inline",
      mimeType: normalisedType,
      bytes: bytes.byteLength,
      sha256: createHash("sha256").update(bytes).digest("hex"),
      textChars: text.length,
    });
    prompt.push({ index, mimeType: normalisedType, text });
  });
  return { meta, prompt };
}
