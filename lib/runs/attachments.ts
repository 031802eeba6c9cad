import { createHash } from "node:crypto";
import { convert as htmlToText } from "html-to-text";
import mammoth from "mammoth";
import type { AttachmentInput } from "../api/requests";
import { fetchAttachment } from "../attachments/fetch-url";
import { contradicts, sniff } from "../attachments/sniff";
import type { Limits } from "../config/schema";
import { GenserveError, validationError } from "../errors";
import type { AttachmentMeta } from "../store/types";

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
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DATA_URL = /^data:([\w.+-]+\/[\w.+-]+)?((?:;[\w-]+=[^;,]*)*);base64,(.*)$/s;

export interface AttachmentOptions {
  limits: Pick<Limits, "attachments" | "attachmentBytes" | "attachmentsTotalBytes" | "attachmentFetchTimeoutMs">;
  allowPrivate: boolean;
  model: { alias: string; vision: boolean };
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
      url = attachment.file;
      const fetched = await fetchAttachment(attachment.file, index, {
        allowPrivate: options.allowPrivate,
        maxBytes: Math.min(limits.attachmentBytes, limits.attachmentsTotalBytes - total),
        timeoutMs: limits.attachmentFetchTimeoutMs,
        maxRedirects: 3,
      });
      bytes = fetched.bytes;
      type ??= fetched.contentType ? bareType(fetched.contentType) : undefined;
    } else {
      let payload = attachment.file;
      const dataUrl = DATA_URL.exec(attachment.file);
      if (dataUrl) {
        type ??= dataUrl[1] && bareType(dataUrl[1]);
        payload = dataUrl[3] ?? "";
      }
      if (!type) throw validationError([{ path: `${path}/mimeType`, message: "is required for inline content" }]);
      const compact = payload.replace(/\s+/g, "");
      if (!BASE64.test(compact)) throw validationError([{ path: `${path}/file`, message: "is not valid standard base64 (or a base64 data: URL)" }]);
      bytes = Buffer.from(compact, "base64");
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
    if (type === "text/html") {
      text = htmlToText(decodeUtf8(bytes, index, type), { wordwrap: false, selectors: [{ selector: "a", options: { ignoreHref: true } }, { selector: "img", format: "skip" }] });
      resolved.prompt.push({ index, mimeType: type, text });
    } else if (type === "application/pdf") {
      text = await pdfText(bytes, index);
      resolved.prompt.push({ index, mimeType: type, text });
    } else if (type === DOCX) {
      text = await docxText(bytes, index);
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

const unreadable = (index: number, reason: string) =>
  new GenserveError("attachment_unreadable", { detail: `attachments[${index}]: ${reason}.`, errors: [{ path: `/attachments/${index}/file`, message: reason }] });

/** The text of a PDF page by page (pdf.js); encrypted and image-only documents are unreadable. */
async function pdfText(bytes: Buffer, index: number): Promise<string> {
  const { getDocument } = await import("pdfjs-dist/legacy/build/pdf.mjs");
  let document: Awaited<ReturnType<typeof getDocument>["promise"]>;
  try {
    document = await getDocument({ data: new Uint8Array(bytes), isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0 }).promise;
  } catch (error) {
    if ((error as Error).name === "PasswordException") throw unreadable(index, "the PDF is encrypted (password-protected)");
    throw unreadable(index, "not a readable PDF document");
  }
  try {
    const pages: string[] = [];
    for (let n = 1; n <= document.numPages; n++) {
      const content = await (await document.getPage(n)).getTextContent();
      const text = content.items.map((item) => ("str" in item ? item.str + (item.hasEOL ? "\n" : "") : "")).join("").trim();
      pages.push(`[page ${n}]\n${text}`);
    }
    if (pages.every((p) => p.replace(/^\[page \d+\]\n/, "") === "")) throw unreadable(index, "the PDF has no text layer (image-only: run OCR on it first)");
    return pages.join("\n\n");
  } finally {
    await document.destroy();
  }
}

async function docxText(bytes: Buffer, index: number): Promise<string> {
  let text: string;
  try {
    text = (await mammoth.extractRawText({ buffer: bytes })).value.trim();
  } catch {
    throw unreadable(index, "not a readable DOCX document");
  }
  if (!text) throw unreadable(index, "the DOCX document has no text");
  return text;
}

function decodeUtf8(bytes: Buffer, index: number, type: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw validationError([{ path: `/attachments/${index}/file`, message: `declared ${type} but is not valid UTF-8 text` }]);
  }
}
