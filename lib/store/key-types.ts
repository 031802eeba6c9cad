/** API keys and their meters: the records of `Store["keys"]` and of runs' admission. */

import "server-only";
import type { KeyLimits } from "../domain/key-limits";
import type { Role } from "../domain/roles";

/** A project (workspace): its keys see it and nothing else. */
export interface ProjectRecord {
  id: string;
  /** The name in URLs and the CLI (`--project`), unique. */
  slug: string;
  name: string;
  createdAt: string;
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** SHA-256 of the key, hex. The key itself is never stored. */
  hash: string;
  /** First characters of the key, to recognise it in listings. */
  prefix: string;
  /** role === "admin", kept for what read it before roles. */
  admin: boolean;
  /** What the key may do in its project. */
  role: Role;
  /** The one project the key sees (a key never changes project). */
  projectId: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** Signs this key's callback events (Standard Webhooks, `whsec_...`). */
  webhookSecret: string;
  limits: KeyLimits;
}

/** Whose records a list holds: one key's, or every key's of one project (neither: every key's, for the operator's CLI). */
export interface OwnerScope {
  keyId?: string;
  projectId?: string;
}

/** A reservation a run makes on one of its key's meters (lib/keys/limit-meters.ts names them). */
export interface MeterCharge {
  meter: string;
  amount: number;
  /** The most `used + reserved` may reach. */
  limit: number;
}

/** A meter as a reservation found it: `amount` is what the run asked for. */
export interface MeterState {
  meter: string;
  used: number;
  reserved: number;
  limit: number;
  amount: number;
}

/** All of a run's charges reserved (states after them), or none, with the first that did not fit (states before). */
export type Admission = { ok: true; states: MeterState[] } | { ok: false; refused: MeterState; states: MeterState[] };

/**
 * What a run's reservations settle to when it ends, by meter kind (the part of the meter's name
 * before ":"); a kind left out settles to 0. "reserved": charge what was reserved (the run's real
 * use is unknown: its process died).
 */
export type Settlement = Partial<Record<string, number>> | "reserved";
