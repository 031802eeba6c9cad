import "server-only";
import { randomBytes } from "node:crypto";
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { SecretsKeySource } from "../config/config-types";
import { SecretsKeyError } from "./secret-box";

/** Where the embedded store keeps its generated key when none is configured (beside the SQLite file). */
export const SECRETS_KEY_FILE = "secrets.key";

/** A key as written: 32 bytes as base64 (44 characters) or hex (64). */
export function parseSecretsKey(text: string, where: string): Buffer {
  const t = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, "hex") : /^[A-Za-z0-9+/_-]{43}=?$/.test(t) ? Buffer.from(t, "base64") : null;
  if (!key || key.length !== 32) throw new SecretsKeyError(`${where} must hold a 32-byte key as base64 or hex (generate one with: openssl rand -base64 32)`);
  return key;
}

/**
 * The data key that seals stored signing secrets. Configured (`security.secretsKey`): read from the
 * file or the environment variable it names. Not configured: with the embedded SQLite store, a key
 * file in the data directory, created on first start (mode 0600; written whole, then linked into
 * place, so two processes starting together both read the first one's); with PostgreSQL, refused — replicas must share one key, and the
 * database must not hold it.
 */
export function loadSecretsKey(source: SecretsKeySource | null, store: { postgres: boolean; dataDir: string }): Buffer {
  if (source?.kind === "env") {
    if (!source.value) throw new SecretsKeyError(`security.secretsKey names the environment variable ${source.name}, which is not set`);
    return parseSecretsKey(source.value, `the environment variable ${source.name}`);
  }
  if (source?.kind === "file") return readKeyFile(source.path);
  if (store.postgres) {
    throw new SecretsKeyError(
      "with PostgreSQL, set security.secretsKey ({file: PATH} or {env: NAME}) to a 32-byte key shared by every replica (openssl rand -base64 32); callback signing secrets are stored encrypted under it",
    );
  }
  mkdirSync(store.dataDir, { recursive: true });
  const file = path.join(store.dataDir, SECRETS_KEY_FILE);
  const draft = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(draft, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600, flag: "wx" });
  try {
    linkSync(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    unlinkSync(draft);
  }
  return readKeyFile(file);
}

function readKeyFile(file: string): Buffer {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new SecretsKeyError(`cannot read the secrets key file ${file}: ${(error as Error).message}`);
  }
  return parseSecretsKey(text, `the secrets key file ${file}`);
}
