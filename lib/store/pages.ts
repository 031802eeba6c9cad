/**
 * What the store's lists and pages carry: bounded views of runs and threads, so that no read of a
 * list, a thread or a run's history holds more than a fixed number of bytes whatever was stored.
 */
import "server-only";
import type { CallbackSpec } from "../domain/run-vocabulary";
import type { RunRecord, ThreadMessage, ThreadRecord } from "./store-types";

/** How much of each run a list reads and carries, and how far a search looks. */
export interface RunListBounds {
  /** Characters of input and output a listed run carries; its schema, output and callback are whole only up to it. */
  previewChars: number;
  /** A search looks at this many characters at the start of each input. */
  searchChars: number;
  /** Bytes of inputs one search reads at most, in steps it yields between; past it the list ends early (`scannedTo`). */
  searchBytes: number;
}

/** A run as a list shows it: large texts cut to previews, sizes given (`runs.get` has them whole). */
export type RunListItem = Omit<RunRecord, "input" | "schema" | "output" | "callback" | "pace" | "draft" | "grounding" | "history"> & {
  /** The input's first `previewChars` characters. */
  input: string;
  /** The whole input's size in UTF-8 bytes. */
  inputBytes: number;
  /** Whole when its JSON text is within the preview, else null (named in `truncated`). */
  schema: unknown | null;
  output: unknown | null;
  /** The output's start: a string output's text, any other output's JSON text; null without output. */
  outputPreview: string | null;
  /** The output's JSON text in UTF-8 bytes (0 without output). */
  outputBytes: number;
  callback: CallbackSpec | null;
  /** A draft run's record, whole when its JSON text is within the preview, else null (named in `truncated`). */
  draft: RunRecord["draft"];
  /** The fields cut to the preview (or, for schema, output, callback and draft, left out). */
  truncated: ("input" | "schema" | "output" | "callback" | "draft")[];
};

export interface RunListPage {
  runs: RunListItem[];
  /**
   * A search that stopped at its bound before finding `limit` runs: the id of the last run it
   * looked at (runs below it were not searched yet); null when the list is complete.
   */
  scannedTo: string | null;
}

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
