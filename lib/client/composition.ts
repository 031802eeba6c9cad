/**
 * What a person composed in the playground, and how it travels: to a request body, into a
 * shareable permalink (never the key, never attachment bytes) and into local history.
 * Browser-safe.
 */
export type Operation = "generate-object" | "stream-object" | "generate-text";

export const OPERATIONS: { value: Operation; label: string; path: string }[] = [
  { value: "generate-object", label: "Generate object", path: "/api/v1/generate/object" },
  { value: "stream-object", label: "Stream object", path: "/api/v1/stream/object" },
  { value: "generate-text", label: "Generate text", path: "/api/v1/generate/text" },
];

export interface AttachmentDraft {
  name: string;
  mimeType: string;
  size: number;
  /** base64 content or an http(s) URL. */
  file: string;
}

export interface Composition {
  operation: Operation;
  workflowSlug: string;
  contextSlugs: string[];
  threadId: string;
  input: string;
  schemaText: string;
  callbackUrl: string;
  customPropertiesText: string;
  attachments: AttachmentDraft[];
}

export const DEFAULT_CALLBACK_URL = "https://example.com/genserve/callback";

export function emptyComposition(schemaText: string): Composition {
  return {
    operation: "stream-object",
    workflowSlug: "",
    contextSlugs: [],
    threadId: "",
    input: "",
    schemaText,
    callbackUrl: DEFAULT_CALLBACK_URL,
    customPropertiesText: "{}",
    attachments: [],
  };
}

export class CompositionError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/** The request body the operation sends; throws CompositionError naming the field it cannot build. */
export function toRequestBody(c: Composition): Record<string, unknown> {
  const body: Record<string, unknown> = { input: c.input };
  if (c.workflowSlug) body.workflowSlug = c.workflowSlug;
  if (c.contextSlugs.length > 0) body.contextSlugs = c.contextSlugs;
  if (c.attachments.length > 0) body.attachments = c.attachments.map((a) => ({ file: a.file, ...(a.mimeType ? { mimeType: a.mimeType } : {}) }));
  if (c.operation !== "generate-text") {
    try {
      body.schema = JSON.parse(c.schemaText) as unknown;
    } catch (error) {
      throw new CompositionError("/schema", `The schema is not valid JSON: ${(error as Error).message}`);
    }
  }
  if (c.operation === "stream-object") {
    if (c.threadId) body.threadId = c.threadId;
  } else {
    let customProperties: unknown;
    try {
      customProperties = JSON.parse(c.customPropertiesText || "{}");
    } catch (error) {
      throw new CompositionError("/callback/customProperties", `Custom properties are not valid JSON: ${(error as Error).message}`);
    }
    body.type = "event";
    body.callback = { url: c.callbackUrl, ...(customProperties && Object.keys(customProperties).length > 0 ? { customProperties } : {}) };
  }
  return body;
}

/** A permalink fragment: the composition without attachment bytes (URLs are kept). */
export function toPermalinkHash(c: Composition): string {
  const shared = { ...c, attachments: c.attachments.filter((a) => /^https?:\/\//.test(a.file)) };
  const bytes = new TextEncoder().encode(JSON.stringify(shared));
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return `#c=${btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}`;
}

export function fromPermalinkHash(hash: string): Composition | null {
  const match = /^#c=([A-Za-z0-9_-]+)$/.exec(hash);
  if (!match) return null;
  try {
    const binary = atob(match[1]!.replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
    const parsed = JSON.parse(new TextDecoder().decode(bytes)) as Partial<Composition>;
    const base = emptyComposition("{}");
    return { ...base, ...parsed, attachments: Array.isArray(parsed.attachments) ? parsed.attachments : [] };
  } catch {
    return null;
  }
}

/** The server's own estimate (lib/domain/tokens.ts), for the playground's pre-flight figure. */
export { estimateTokens } from "../domain/tokens";
