import "server-only";
import { threadPageQuery } from "../api/requests";
import { validationError, zodFieldErrors } from "../errors";
import type { ThreadService } from "../runs/thread-service";
import type { ThreadRecord } from "../store/store-types";

/** The cursor of a page: its order and the last message's `seq`, opaque to callers. */
const encodeCursor = (order: "asc" | "desc", seq: number) => Buffer.from(`${order}:${seq}`).toString("base64url");

function decodeCursor(cursor: string, order: "asc" | "desc"): number {
  const match = /^(asc|desc):(\d{1,15})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match) throw validationError([{ path: "?cursor", message: "is not a cursor this API returned" }]);
  if (match[1] !== order) throw validationError([{ path: "?cursor", message: `was returned for order=${match[1]}; send the same order` }]);
  return Number(match[2]);
}

/**
 * GET /api/v1/threads/{id}: one page of the thread's messages by the query (`order`, `limit`,
 * `cursor`), within `maxBytes` of content — a message larger than that is cut to it, marked
 * `truncated` (its run has it whole) — and the cursor of the next page.
 */
export async function threadPage(threads: Pick<ThreadService, "page">, thread: ThreadRecord, query: URLSearchParams, maxBytes: number) {
  const parsed = threadPageQuery.safeParse(Object.fromEntries(query), { reportInput: true });
  if (!parsed.success) throw validationError(zodFieldErrors(parsed.error).map((e) => ({ ...e, path: `?${e.path.slice(1)}` })));
  const { order, limit, cursor } = parsed.data;
  const from = cursor === undefined ? undefined : decodeCursor(cursor, order);
  const { messages, more } = await threads.page(thread, { order, from, limit, maxBytes });
  return {
    messages: messages.map((m) => ({ role: m.role, content: m.content, runId: m.runId, createdAt: m.createdAt, bytes: m.bytes, truncated: m.truncated })),
    nextCursor: more ? encodeCursor(order, messages[messages.length - 1]!.seq) : null,
  };
}
