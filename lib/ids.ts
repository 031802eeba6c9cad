import "server-only";
import { randomBytes, randomFillSync } from "node:crypto";
import { encodeTime, monotonicFactory } from "ulid";

/**
 * ulid's own source of randomness calls crypto.getRandomValues once per character (16 times an id,
 * ~5% of a run's CPU when measured): this one draws from a pool of cryptographically random bytes,
 * refilled 4 KiB at a time. A float in [0, 1), as ulid expects.
 */
const pool = Buffer.alloc(4096);
let offset = pool.length;
function random(): number {
  if (offset + 4 > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const value = pool.readUInt32BE(offset) / 2 ** 32;
  offset += 4;
  return value;
}

const nextUlid = monotonicFactory(random);

/** Run ids sort by creation time (ULID), so listing newest-first and cursor paging use the id alone. */
export const newRunId = (): string => `run_${nextUlid()}`;

/** The lowest run id a run created at `ms` (epoch milliseconds) can have: a time bound as an id bound. */
export const runIdAt = (ms: number): string => `run_${encodeTime(Math.max(0, Math.min(ms, 2 ** 48 - 1)), 10)}${"0".repeat(16)}`;

/** Evaluations of test suites sort by creation too (the suite's newest is its baseline "latest"). */
export const newEvaluationId = (): string => `eval_${nextUlid()}`;

/** A stored copy of a suite version that evaluations share (suite_snapshots). */
export const newSnapshotId = (): string => `snap_${nextUlid()}`;

/** Callback event ids sort by creation too (the Standard Webhooks `webhook-id`). */
export const newEventId = (): string => `evt_${nextUlid()}`;

/** Share links sort by creation; the link's token is separate (newShareToken), and only its hash is stored. */
export const newShareId = (): string => `shr_${nextUlid()}`;

/** The unguessable part of a share link: 32 random bytes. */
export const newShareToken = (): string => randomBytes(32).toString("base64url");

/** A thread id when the caller names none. */
export const newThreadId = (): string => `thr_${randomBytes(12).toString("base64url")}`;

/** A Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString("base64")}`;

/** Short random id for records that need no ordering. */
export const newKeyId = (): string => `key_${randomBytes(8).toString("hex")}`;

/** A person (lib/people/). */
export const newUserId = (): string => `usr_${nextUlid()}`;

export const newProjectId = (): string => `prj_${randomBytes(8).toString("hex")}`;

/** An invitation to a project (its link's token is apart: random, stored hashed). */
export const newInviteId = (): string => `inv_${nextUlid()}`;
