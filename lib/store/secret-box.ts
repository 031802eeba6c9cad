import "server-only";
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/**
 * Secrets the server must read back (callback signing secrets) are kept sealed in the database:
 * AES-256-GCM under a data key that lives outside it (a file or an environment variable, see
 * secrets-key.ts). A sealed value is `enc:v1:<key id>:<base64url of iv | tag | ciphertext>`: the
 * version names the format and the key id (8 hex characters of the key's SHA-256) names the key, so
 * a later rotation can keep several keys and re-seal values one by one. The additional data binds a
 * value to its row (an API key's id): a sealed secret copied onto another row does not open.
 */
export const SEALED_PREFIX = "enc:v1:";

const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretsKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SecretsKeyError";
  }
}

export interface SecretBox {
  /** The key's id as sealed values carry it. */
  readonly keyId: string;
  seal(plain: string, boundTo: string): string;
  /** The plain value; a value not sealed (written before encryption existed) is returned as it is. */
  open(value: string, boundTo: string): string;
}

export const isSealed = (value: string): boolean => value.startsWith(SEALED_PREFIX);

export function secretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new SecretsKeyError(`the secrets key must be 32 bytes (it is ${key.length})`);
  const keyId = createHash("sha256").update(key).digest("hex").slice(0, 8);
  return {
    keyId,
    seal(plain, boundTo) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(boundTo, "utf8"));
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return `${SEALED_PREFIX}${keyId}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url")}`;
    },
    open(value, boundTo) {
      if (!isSealed(value)) return value;
      const [sealedBy, data] = value.slice(SEALED_PREFIX.length).split(":");
      if (sealedBy !== keyId || data === undefined) {
        throw new SecretsKeyError(`a stored secret was sealed with key ${sealedBy ?? "?"}, but the configured secrets key is ${keyId} (security.secretsKey names the wrong key)`);
      }
      const bytes = Buffer.from(data, "base64url");
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES));
        decipher.setAAD(Buffer.from(boundTo, "utf8"));
        decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
        return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
      } catch {
        throw new SecretsKeyError(`a stored secret does not open with the configured secrets key ${keyId} (damaged, or moved to another row)`);
      }
    },
  };
}
