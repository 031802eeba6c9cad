import "server-only";
import type { Limits } from "../config/schema";
import type { ModelConfig } from "../config/config-types";
import { CHARS_PER_TOKEN } from "../domain/tokens";
import { GenserveError } from "../errors";
import type { ThreadInfo } from "../store/store-types";
import { DEFAULT_CONTEXT_WINDOW } from "./budget";

/**
 * What a thread may hold and how much of it a run reads (issue 31: a thread grown to 400 MiB was
 * read whole for every turn). A turn is refused before any run exists when the thread could not
 * take its input; its history is read newest first within a bound in bytes, never whole.
 */

/** UTF-8 bytes one UTF-16 code unit takes at most: text of N characters is at most 3N bytes. */
const MAX_BYTES_PER_CHAR = 3;

/**
 * Bytes of the thread's newest messages a run reads: every exchange `fitHistory` could keep fits
 * the model's window in estimated tokens (CHARS_PER_TOKEN characters each), so it lies within
 * these bytes; `limits.threadHistoryBytes` caps it for very large windows.
 */
export function historyBytes(model: Pick<ModelConfig, "contextWindow">, limits: Pick<Limits, "threadHistoryBytes">): number {
  const window = model.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
  return Math.min(limits.threadHistoryBytes, window * CHARS_PER_TOKEN * MAX_BYTES_PER_CHAR);
}

/**
 * Refuses a turn the thread cannot take: an input larger than a whole thread may be (413 at
 * `/input`), or a thread whose messages or bytes would pass their limit with this turn (409
 * `thread_full` at `/threadId`). The reply is appended whole, so a thread can end past
 * `limits.threadBytes` by its last reply; the next turn is then refused.
 */
export function assertThreadRoom(thread: ThreadInfo | null, inputBytes: number, limits: Pick<Limits, "threadBytes" | "threadMessages">): void {
  if (inputBytes > limits.threadBytes) {
    throw new GenserveError("payload_too_large", {
      detail: `input is ${inputBytes} bytes; a thread holds at most ${limits.threadBytes} bytes (limits.threadBytes).`,
      errors: [{ path: "/input", message: `is larger than a thread may hold (${limits.threadBytes} bytes)` }],
    });
  }
  if (!thread) return;
  const full = (why: string) =>
    new GenserveError("thread_full", {
      detail: `Thread "${thread.id}" ${why}. Start a new thread (its history is what the model can see anyway) or delete this one.`,
      errors: [{ path: "/threadId", message: "is full" }],
    });
  if (thread.messageCount + 2 > limits.threadMessages) throw full(`holds ${thread.messageCount} messages; a turn adds 2 and the limit is ${limits.threadMessages} (limits.threadMessages)`);
  if (thread.bytes + inputBytes > limits.threadBytes) {
    throw full(`holds ${thread.bytes} bytes; this input of ${inputBytes} bytes would pass its limit of ${limits.threadBytes} bytes (limits.threadBytes)`);
  }
}
