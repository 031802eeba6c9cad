"use client";

import { useState, type DragEvent } from "react";
import type { FieldProblem } from "@/lib/client/api";
import { readAttachments, type AttachmentDraft } from "@/lib/client/composition";
import { Button } from "../ui/button";
import { FieldErrors, TextInput } from "../ui/field";

/** Files dropped or chosen (sent inline), and URLs genserve fetches. */
export function AttachmentsField({ attachments, onChange, problems }: { attachments: AttachmentDraft[]; onChange(next: AttachmentDraft[]): void; problems: FieldProblem[] }) {
  const [url, setUrl] = useState("");
  const [over, setOver] = useState(false);
  const add = async (files: FileList | File[]) => onChange([...attachments, ...(await readAttachments(files))]);
  return (
    <fieldset>
      <legend className="text-sm font-medium">Attachments</legend>
      <label
        htmlFor="files"
        onDragOver={(e: DragEvent) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e: DragEvent) => {
          e.preventDefault();
          setOver(false);
          void add(e.dataTransfer.files);
        }}
        className={`mt-1 flex cursor-pointer flex-col items-center gap-1 rounded-lg border-2 border-dashed px-3 py-4 text-center text-sm focus-within:ring-2 focus-within:ring-blue-600 ${over ? "border-blue-600 bg-blue-50 dark:border-blue-400 dark:bg-blue-950" : "border-zinc-300 hover:border-zinc-400 dark:border-zinc-700 dark:hover:border-zinc-500"}`}
      >
        <span className="font-medium">Drop files here or choose files</span>
        <span className="text-xs text-zinc-600 dark:text-zinc-400">Images, PDFs and text, sent with the input</span>
        <input id="files" type="file" multiple onChange={(e) => e.target.files && void add(e.target.files)} className="sr-only" />
      </label>
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
