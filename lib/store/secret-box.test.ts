import { mkdtempSync, readFileSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isSealed, secretBox, SecretsKeyError } from "./secret-box";
import { loadSecretsKey, SECRETS_KEY_FILE } from "./secrets-key";

describe("sealed secrets", () => {
  const box = secretBox(Buffer.alloc(32, 3));
  it("seal with a version and key id, open only under the same key and row", () => {
    const sealed = box.seal("whsec_abc", "key_1");
    expect(sealed).toMatch(new RegExp(`^enc:v1:${box.keyId}:`));
    expect(sealed).not.toContain("whsec_abc");
    expect(box.seal("whsec_abc", "key_1")).not.toBe(sealed); // a fresh IV each time
    expect(box.open(sealed, "key_1")).toBe("whsec_abc");
    expect(() => box.open(sealed, "key_2")).toThrow(SecretsKeyError);
    expect(() => secretBox(Buffer.alloc(32, 4)).open(sealed, "key_1")).toThrow(/configured secrets key/);
    expect(box.open("whsec_plain", "key_1")).toBe("whsec_plain");
    expect(isSealed("whsec_plain")).toBe(false);
  });

  it("generate a key file (0600) in the data directory for SQLite once, and refuse PostgreSQL without a configured key", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "genserve-key-"));
    const first = loadSecretsKey(null, { postgres: false, dataDir: dir });
    expect(loadSecretsKey(null, { postgres: false, dataDir: dir })).toEqual(first);
    expect(first).toHaveLength(32);
    expect(statSync(path.join(dir, SECRETS_KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(loadSecretsKey({ kind: "file", path: path.join(dir, SECRETS_KEY_FILE) }, { postgres: true, dataDir: "/nowhere" })).toEqual(first);
    expect(loadSecretsKey({ kind: "env", name: "K", value: readFileSync(path.join(dir, SECRETS_KEY_FILE), "utf8") }, { postgres: true, dataDir: "/nowhere" })).toEqual(first);
    expect(() => loadSecretsKey(null, { postgres: true, dataDir: dir })).toThrow(/security\.secretsKey/);
    expect(() => loadSecretsKey({ kind: "env", name: "K", value: undefined }, { postgres: true, dataDir: dir })).toThrow(/K, which is not set/);
    expect(() => loadSecretsKey({ kind: "env", name: "K", value: "short" }, { postgres: true, dataDir: dir })).toThrow(/32-byte key/);
  });
});
