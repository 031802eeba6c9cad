import { describe, expect, it } from "vitest";
import { hashPassword, SCRYPT_CONCURRENCY, scryptLoad, verifyPassword } from "./passwords";

describe("passwords", () => {
  it("hashes with scrypt and a salt, and verifies only the same password", async () => {
    const a = await hashPassword("correct horse battery staple");
    const b = await hashPassword("correct horse battery staple");
    expect(a).toMatch(/^scrypt\$65536\$8\$1\$[\w-]+\$[\w-]+$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain("correct horse");
    expect(await verifyPassword("correct horse battery staple", a)).toBe(true);
    expect(await verifyPassword("correct horse battery stapl", a)).toBe(false);
    expect(await verifyPassword("anything", "plain-text")).toBe(false);
  });

  it("runs at most a few derivations at once; the rest wait their turn and all finish", async () => {
    const stored = await hashPassword("correct horse battery staple");
    const seen: number[] = [];
    const checks = Array.from({ length: 6 }, (_, i) => verifyPassword(i === 0 ? "correct horse battery staple" : `guess ${i}`, stored).finally(() => seen.push(scryptLoad().running)));
    expect(scryptLoad()).toEqual({ running: SCRYPT_CONCURRENCY, waiting: 6 - SCRYPT_CONCURRENCY });
    expect(await Promise.all(checks)).toEqual([true, false, false, false, false, false]);
    expect(Math.max(...seen)).toBeLessThanOrEqual(SCRYPT_CONCURRENCY);
    expect(scryptLoad()).toEqual({ running: 0, waiting: 0 });
  });
});
