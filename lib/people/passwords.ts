import "server-only";
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";

/**
 * Passwords of local accounts, hashed with scrypt (memory-hard: each guess costs 64 MiB and tens of
 * milliseconds), stored self-described as `scrypt$N$r$p$salt$hash` so parameters can rise later
 * without invalidating stored hashes.
 */
const PARAMS = { N: 2 ** 16, r: 8, p: 1 } as const;
const KEY_BYTES = 32;
/** Long enough to resist guessing by itself; long passphrases welcome. */
export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 1_024;

/**
 * At most this many scrypt derivations run at once (each holds one of libuv's 4 threads and 64 MiB);
 * the rest wait their turn, so unauthenticated sign-in attempts cannot take the whole thread pool
 * (file, DNS and zlib work share it) or the memory.
 */
export const SCRYPT_CONCURRENCY = 2;
let running = 0;
const waiting: (() => void)[] = [];

async function withScryptSlot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= SCRYPT_CONCURRENCY) await new Promise<void>((resolve) => waiting.push(resolve));
  else running++;
  try {
    return await work();
  } finally {
    // The slot passes straight to the next waiter (running stays the same), or is freed.
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

/** How many derivations run and wait now (tests). */
export const scryptLoad = () => ({ running, waiting: waiting.length });

function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r };
  return withScryptSlot(
    () => new Promise<Buffer>((resolve, reject) => scrypt(password.normalize("NFKC"), salt, KEY_BYTES, options, (error, key) => (error ? reject(error) : resolve(key)))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return ["scrypt", PARAMS.N, PARAMS.r, PARAMS.p, salt.toString("base64url"), key.toString("base64url")].join("$");
}

/** Whether `password` matches `stored`, compared in constant time; a malformed hash matches nothing. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !hash) return false;
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  if (![params.N, params.r, params.p].every((v) => Number.isSafeInteger(v) && v > 0)) return false;
  const expected = Buffer.from(hash, "base64url");
  const actual = await derive(password, Buffer.from(salt, "base64url"), params);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A stored hash for people without a password, so that a sign-in attempt costs the same either way. */
let decoy: Promise<string> | undefined;
export const decoyHash = () => (decoy ??= hashPassword(randomBytes(16).toString("hex")));
