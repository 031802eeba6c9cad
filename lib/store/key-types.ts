/** API keys and their meters: the records of `Store["keys"]` and of runs' admission. */

import "server-only";
import type { KeyLimits } from "../domain/key-limits";

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** SHA-256 of the key, hex. The key itself is never stored. */
  hash: string;
  /** First characters of the key, to recognise it in listings. */
  prefix: string;
  admin: boolean;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** Signs this key's callback events (Standard Webhooks, `whsec_...`). */
  webhookSecret: string;
  limits: KeyLimits;
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
