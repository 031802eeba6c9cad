/** Suites and evaluations: the records of `Store["suites"]` and `evaluations`. */

import "server-only";
import type { ProblemBody } from "../errors";

/** A test suite managed through the API (`document` as it was put, shape-checked by the caller). */
export interface SuiteRecord {
  slug: string;
  /** The key that created it (it and admin keys may change it). */
  keyId: string;
  /** 1 when created, +1 on every change. */
  version: number;
  document: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export type EvaluationStatus = "queued" | "running" | "completed" | "cancelled" | "failed";

/**
 * A suite's document as evaluations ran it: stored once per suite, version and document, and
 * shared by every evaluation of that version (immutable; kept when the suite changes or goes).
 */
export interface SuiteSnapshot {
  id: string;
  suiteSlug: string;
  suiteVersion: number;
  document: Record<string, unknown>;
  createdAt: string;
}

/** One evaluation of a suite: the suite as it was when it started, what it ran against, and its outcome. */
export interface EvaluationRecord {
  id: string;
  suiteSlug: string;
  suiteVersion: number;
  keyId: string;
  status: EvaluationStatus;
  /** What the cases ran against (workflow, model, repeats, baseline, callback), as JSON. */
  target: Record<string, unknown>;
  /** The suite document as it was when the evaluation was created (`evaluations.snapshot`). */
  snapshotId: string;
  /** Totals written when it ended. */
  summary: unknown | null;
  error: ProblemBody | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export type NewEvaluation = Omit<EvaluationRecord, "status" | "summary" | "error" | "startedAt" | "finishedAt">;

/** The result of one case run (one repeat of one case). */
export interface EvaluationItemRecord {
  /** Order of recording (an SSE follower resumes after it). */
  seq: number;
  caseIndex: number;
  repeat: number;
  runId: string | null;
  /** passed: the run succeeded and every expectation held; failed: one did not; error: the run failed. */
  status: "passed" | "failed" | "error";
  output: unknown | null;
  checks: unknown[];
  error: ProblemBody | null;
  durationMs: number | null;
  inputTokens: number;
  outputTokens: number;
  cost: string;
  createdAt: string;
}

export interface EvaluationFilter {
  suiteSlug?: string;
  /** Only this key's; undefined: every key's (admin). */
  keyId?: string;
  /** Only evaluations of this project's keys. */
  projectId?: string;
  status?: EvaluationStatus;
  /** Evaluations with an id lower than this one (ids sort by creation time). */
  beforeId?: string;
  limit: number;
}
