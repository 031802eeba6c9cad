import "server-only";
import path from "node:path";
import type { Limits } from "../config/schema";
import { GenserveError, validationError } from "../errors";
import { WorkerPool, type PoolStatus } from "../workers/pool";

/** The worker file, relative to the package root (plain JavaScript loaded by Node as is). */
export const EXTRACT_WORKER_FILE = path.join("lib", "attachments", "extract-worker.mjs");

export type DocumentKind = "docx" | "pdf" | "html";

export type ExtractLimits = Pick<
  Limits,
  "extractWorkers" | "attachmentExtractTimeoutMs" | "attachmentExtractMemoryMb" | "attachmentUnpackedBytes" | "attachmentElements" | "attachmentPages"
>;

/** A DOCX may hold this many ZIP entries (a long document with many images has a few hundred). */
const MAX_ENTRIES = 10_000;

export const unreadable = (index: number, reason: string) =>
  new GenserveError("attachment_unreadable", { detail: `attachments[${index}]: ${reason}.`, errors: [{ path: `/attachments/${index}/file`, message: reason }] });

/**
 * Extracts the text of documents in worker threads, each under a heap limit and a time limit, with
 * the sizes a document unpacks to checked before it is parsed. A document past any limit is 422
 * `attachment_unreadable` naming the limit; the server and other requests are unaffected.
 */
export class DocumentExtractor {
  private readonly pool: WorkerPool<null>;

  constructor(
    file: string,
    private readonly limits: ExtractLimits,
  ) {
    this.pool = new WorkerPool(file, {
      size: limits.extractWorkers,
      resourceLimits: { maxOldGenerationSizeMb: limits.attachmentExtractMemoryMb, maxYoungGenerationSizeMb: Math.min(64, limits.attachmentExtractMemoryMb) },
    }, () => null);
  }

  async text(kind: DocumentKind, bytes: Uint8Array, index: number, owner?: string): Promise<string> {
    const { limits } = this;
    const reply = await this.pool.run({
      owner,
      timeoutMs: limits.attachmentExtractTimeoutMs,
      timedOut: () => unreadable(index, `extracting its text took longer than ${limits.attachmentExtractTimeoutMs} ms (limits.attachmentExtractTimeoutMs)`),
      crashed: (outOfMemory) =>
        outOfMemory
          ? unreadable(index, `extracting its text needed more than ${limits.attachmentExtractMemoryMb} MB of memory (limits.attachmentExtractMemoryMb)`)
          : unreadable(index, "the document could not be read"),
      message: () => ({
        kind,
        bytes,
        limits: { maxEntries: MAX_ENTRIES, maxUnpackedBytes: limits.attachmentUnpackedBytes, maxElements: limits.attachmentElements, maxPages: limits.attachmentPages },
      }),
    });
    if (typeof reply.unreadable === "string") throw unreadable(index, reply.unreadable);
    if (reply.notUtf8) throw validationError([{ path: `/attachments/${index}/file`, message: `declared text/html but is not valid UTF-8 text` }]);
    return reply.text as string;
  }

  status(): PoolStatus {
    return this.pool.status();
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
