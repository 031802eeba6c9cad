/**
 * What a person composed in the playground, and how it travels: to a request body, into a
 * shareable permalink (never the key, never attachment bytes) and into local history.
 * Browser-safe.
 */
import { z } from "zod";
import { draftSchema } from "../api/draft-shapes";
import type { WorkflowDraft } from "../domain/drafts";
import { estimateTokens } from "../domain/tokens";

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

/**
 * A permalink fragment: the composition without attachment bytes (URLs are kept), and the prompt's
 * unsaved edits when there are some (a draft run reopened from its run page, or a draft being shared).
 */
export function toPermalinkHash(c: Composition, draft?: WorkflowDraft): string {
  const shared = { ...c, attachments: c.attachments.filter((a) => /^https?:\/\//.test(a.file)), ...(draft && { draft }) };
  const bytes = new TextEncoder().encode(JSON.stringify(shared));
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return `#c=${btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}`;
}

/** A permalink's composition, checked field by field (`restoreComposition`); null when the hash is not a permalink's at all. */
export function fromPermalinkHash(hash: string): Restored | null {
  const match = /^#c=([A-Za-z0-9_-]+)$/.exec(hash);
  if (!match) return null;
  let parsed: unknown;
  try {
    const binary = atob(match[1]!.replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    return { composition: emptyComposition("{}"), problems: ["it is not a permalink genserve made (its data cannot be read)"] };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed) || !("draft" in parsed)) return restoreComposition(parsed, emptyComposition("{}"));
  // The draft travels beside the composition and is checked as a request's draft is.
  const { draft, ...rest } = parsed as Record<string, unknown>;
  const restored = restoreComposition(rest, emptyComposition("{}"));
  const checked = draftSchema.safeParse(draft);
  if (checked.success) return { ...restored, draft: checked.data };
  const issue = checked.error.issues[0];
  return { ...restored, problems: [...restored.problems, `${["draft", ...(issue?.path ?? []).map(String)].join("/")}: ${(issue?.message ?? "invalid").replace(/^Invalid input: /, "")}; the saved prompt is used`] };
}

/**
 * What each field of a composition may hold when it comes from outside the page — a permalink
 * anyone can craft, or this browser's history — field by field, so one bad field is named and
 * dropped while the rest is kept (a crafted link once left the page on "Something went wrong").
 */
const COMPOSITION_FIELDS = {
  operation: z.enum(["generate-object", "stream-object", "generate-text"], { error: 'must be "generate-object", "stream-object" or "generate-text"' }),
  workflowSlug: z.string().max(300),
  contextSlugs: z.array(z.string().max(300)).max(100),
  threadId: z.string().max(300),
  input: z.string(),
  schemaText: z.string(),
  callbackUrl: z.string().max(8_192),
  customPropertiesText: z.string(),
  attachments: z
    // Only attachments by URL travel (a permalink never holds an attachment's bytes).
    .array(z.strictObject({ name: z.string().max(1_000), mimeType: z.string().max(300), size: z.number().int().min(0), file: z.string().regex(/^https?:\/\//, "must be an http(s) URL") }))
    .max(100),
} satisfies { [K in keyof Composition]: z.ZodType<Composition[K]> };

/** A composition restored from outside the page, and what in it could not be used (each dropped for its default). */
export interface Restored {
  composition: Composition;
  problems: string[];
  /** The prompt's unsaved edits the link carried (a draft run's definition), opened as the prompt's draft. */
  draft?: WorkflowDraft;
}

/** Checks a composition that came from outside the page field by field; unknown fields are ignored and named. */
export function restoreComposition(value: unknown, base: Composition): Restored {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { composition: base, problems: ["it does not hold a composition"] };
  const composition: Record<string, unknown> = { ...base };
  const problems: string[] = [];
  for (const [field, given] of Object.entries(value)) {
    const shape = (COMPOSITION_FIELDS as Record<string, z.ZodType>)[field];
    if (!shape) {
      problems.push(`${field}: not a field genserve knows; ignored`);
      continue;
    }
    const parsed = shape.safeParse(given);
    if (parsed.success) composition[field] = parsed.data;
    else {
      const issue = parsed.error.issues[0];
      const where = [field, ...(issue?.path ?? []).map(String)].join("/");
      problems.push(`${where}: ${(issue?.message ?? "invalid").replace(/^Invalid input: /, "")}; left at its default`);
    }
  }
  return { composition: composition as unknown as Composition, problems };
}

/** The playground's pre-flight figure: the server's own estimate (lib/domain/tokens.ts) of a composition's prompt. */
export function estimateInputTokens(
  c: Composition,
  workflow: { instructionsChars: number; contexts: string[] } | undefined,
  contexts: readonly { slug: string; size: number }[],
): number {
  const contextChars = contexts.filter((x) => c.contextSlugs.includes(x.slug) || workflow?.contexts.includes(x.slug)).reduce((n, x) => n + x.size, 0);
  // Inline attachments count at their decoded size; URLs are unknown until fetched.
  const attachmentChars = c.attachments.reduce((n, a) => n + (/^https?:/.test(a.file) ? 0 : Math.floor((a.file.length * 3) / 4)), 0);
  const schemaChars = c.operation === "generate-text" ? 0 : c.schemaText.length;
  return estimateTokens((workflow?.instructionsChars ?? 0) + c.input.length + contextChars + attachmentChars + schemaChars);
}

/** Files read as inline attachments (base64), typed by the browser or as plain text. */
export async function readAttachments(files: Iterable<File>): Promise<AttachmentDraft[]> {
  return Promise.all(
    [...files].map(async (file): Promise<AttachmentDraft> => {
      const bytes = new Uint8Array(await file.arrayBuffer());
      let binary = "";
      for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      return { name: file.name, mimeType: file.type || "text/plain", size: file.size, file: btoa(binary) };
    }),
  );
}

/** JSON text parsed, or undefined when it does not parse (a schema being typed). */
export function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
