/**
 * What the store's pages carry: bounded views of threads, so that no read of a thread or a run's
 * history holds more than a fixed number of bytes whatever was stored.
 */
import "server-only";
import type { ThreadMessage, ThreadRecord } from "./types";

/** A thread with its size: what a turn may still add is measured against it. */
export type ThreadInfo = ThreadRecord & { messageCount: number; bytes: number };

/** A message as a page of a thread carries it: `content` cut to the page's bytes when larger (`truncated`). */
export type ThreadPageMessage = ThreadMessage & { seq: number; bytes: number; truncated: boolean };

export interface ThreadPageQuery {
  /** "asc": oldest first (after `from`); "desc": newest first (before `from`). */
  order: "asc" | "desc";
  /** The `seq` a page continues from (exclusive); absent: from the start (or the end). */
  from?: number;
  limit: number;
  /** Bytes of content the page carries at most; its first message is cut to it when larger. */
  maxBytes: number;
}
