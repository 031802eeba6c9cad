import "server-only";
import { randomBytes } from "node:crypto";
import { monotonicFactory } from "ulid";

const nextUlid = monotonicFactory();

/** Run ids sort by creation time (ULID), so listing newest-first and cursor paging use the id alone. */
export const newRunId = (): string => `run_${nextUlid()}`;

/** A thread id when the caller names none. */
export const newThreadId = (): string => `thr_${randomBytes(12).toString("base64url")}`;

/** A Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString("base64")}`;

/** Short random id for records that need no ordering. */
export const newKeyId = (): string => `key_${randomBytes(8).toString("hex")}`;
