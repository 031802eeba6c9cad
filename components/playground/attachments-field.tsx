"use client";

import { useState } from "react";
import type { FieldProblem } from "@/lib/client/api";
import { readAttachments, type AttachmentDraft } from "@/lib/client/composition";
import { Button } from "../ui/button";
import { FieldErrors, TextInput } from "../ui/field";

/** Whether an attachment is an image (by its type, or a URL's extension): only vision models take them. */
export function isImage(a: AttachmentDraft): boolean {
  return a.mimeType.startsWith("image/") || (!a.mimeType && /\.(png|jpe?g|gif|webp)(\?|#|$)/i.test(a.file));
}

/**
 * Attach, beside the input (files chosen or dropped on the form are sent inline; URLs genserve
 * fetches). An image for a model without vision is said before Run, which stays off, instead of a
 * 422 after it.
 */
export function AttachmentsField({
  attachments,
  onChange,
  problems,
  model,
}: {
  attachments: AttachmentDraft[];
  onChange(next: AttachmentDraft[]): void;
  problems: FieldProblem[];
  /** The workflow's model: its alias, and whether it takes images (unknown while loading). */
  model?: { alias: string; vision: boolean };
}) {
  const [url, setUrl] = useState("");
  const add = async (files: FileList | File[]) => onChange([...attachments, ...(await readAttachments(files))]);
  const refused = model && !model.vision ? attachments.filter(isImage) : [];
  return (
    <div>
      <div className="flex flex-wrap items-center gap-2">
        <label
          htmlFor="files"
          className="inline-flex shrink-0 cursor-pointer items-center gap-1 rounded border border-zinc-400 px-2 py-1 text-sm hover:bg-zinc-100 focus-within:ring-2 focus-within:ring-blue-600 dark:border-zinc-600 dark:hover:bg-zinc-800"
        >
          <span aria-hidden>+</span> Attach files
          <input id="files" type="file" multiple onChange={(e) => e.target.files && void add(e.target.files)} className="sr-only" />
        </label>
        <details className="text-sm">
          <summary className="cursor-pointer rounded px-1 py-1 text-zinc-700 dark:text-zinc-300">or by URL</summary>
          <div className="mt-1 flex gap-2">
            <label htmlFor="attachment-url" className="sr-only">
              Attachment URL
            </label>
            <TextInput id="attachment-url" placeholder="https://…" value={url} onChange={(e) => setUrl(e.target.value)} />
            <Button
              onClick={() => {
                if (!/^https?:\/\//.test(url)) return;
                onChange([...attachments, { name: url.split("/").pop() || url, mimeType: "", size: 0, file: url }]);
                setUrl("");
              }}
            >
              Add URL
            </Button>
          </div>
        </details>
        <span className="text-xs text-zinc-600 dark:text-zinc-400">Images{model && !model.vision ? " (vision models only)" : ""}, PDFs and text; or drop files on the form.</span>
      </div>
      {attachments.length > 0 ? (
        <ul className="mt-2 flex flex-wrap gap-2" aria-label="Attached files">
          {attachments.map((a, i) => (
            <li
              key={`${a.name}-${i}`}
              className={`flex max-w-full items-center gap-2 rounded-full px-3 py-1 text-xs ${refused.includes(a) ? "bg-amber-100 text-amber-950 dark:bg-amber-950 dark:text-amber-100" : "bg-zinc-100 dark:bg-zinc-800"}`}
            >
              <span className="truncate">
                {a.name} · {a.mimeType || "type from URL"} · {a.size ? `${a.size} B` : "by URL"}
              </span>
              <button type="button" aria-label={`Remove ${a.name}`} onClick={() => onChange(attachments.filter((_, j) => j !== i))}>
                ×
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      {refused.length > 0 && model ? (
        <p id="attachments-refused" role="alert" className="mt-1 text-sm text-amber-900 dark:text-amber-200">
          {refused.map((a) => a.name).join(", ")}: {refused.length === 1 ? "an image" : "images"}, and the workflow’s model “{model.alias}” does not take images (no <code>vision: true</code>). Remove{" "}
          {refused.length === 1 ? "it" : "them"}, or pick a workflow on a vision model.
        </p>
      ) : null}
      <FieldErrors id="attachments-error" problems={problems} />
    </div>
  );
}
