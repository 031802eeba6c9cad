"use client";

import { useState, type DragEvent } from "react";
import type { FieldProblem } from "@/lib/client/api";
import { readAttachments, type AttachmentDraft } from "@/lib/client/composition";
import { Button } from "../ui/button";
import { FieldErrors, TextInput } from "../ui/field";

/** Files dropped or chosen (sent inline), and URLs genserve fetches. */
export function AttachmentsField({ attachments, onChange, problems }: { attachments: AttachmentDraft[]; onChange(next: AttachmentDraft[]): void; problems: FieldProblem[] }) {
  const [url, setUrl] = useState("");
  const add = async (files: FileList | File[]) => onChange([...attachments, ...(await readAttachments(files))]);
  return (
    <fieldset className="rounded border border-zinc-200 p-3 dark:border-zinc-800">
      <legend className="px-1 text-sm font-medium">Attachments</legend>
      <div
        onDragOver={(e: DragEvent) => e.preventDefault()}
        onDrop={(e: DragEvent) => {
          e.preventDefault();
          void add(e.dataTransfer.files);
        }}
        className="rounded border border-dashed border-zinc-400 p-3 text-sm dark:border-zinc-600"
      >
        <label htmlFor="files" className="mr-2">
          Drop files here or choose:
        </label>
        <input id="files" type="file" multiple onChange={(e) => e.target.files && void add(e.target.files)} className="text-sm" />
      </div>
      <div className="mt-2 flex gap-2">
        <label htmlFor="attachment-url" className="sr-only">
          Attachment URL
        </label>
        <TextInput id="attachment-url" placeholder="https://… (attachment by URL)" value={url} onChange={(e) => setUrl(e.target.value)} />
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
      {attachments.length > 0 ? (
        <ul className="mt-2 flex flex-wrap gap-2" aria-label="Attached files">
          {attachments.map((a, i) => (
            <li key={`${a.name}-${i}`} className="flex items-center gap-2 rounded-full bg-zinc-100 px-3 py-1 text-xs dark:bg-zinc-800">
              <span>
                {a.name} · {a.mimeType || "type from URL"} · {a.size ? `${a.size} B` : "by URL"}
              </span>
              <button type="button" aria-label={`Remove ${a.name}`} onClick={() => onChange(attachments.filter((_, j) => j !== i))}>
                ×
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      <FieldErrors id="attachments-error" problems={problems} />
    </fieldset>
  );
}
