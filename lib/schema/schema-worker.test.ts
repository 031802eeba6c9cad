import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { isGenserveError } from "../errors";
import { SchemaWorkerPool } from "./schema-worker";

const file = fileURLToPath(new URL("./validate-worker.mjs", import.meta.url));
const pools: SchemaWorkerPool[] = [];
const pool = (size: number, validateTimeoutMs = 300) => {
  const p = new SchemaWorkerPool(file, { size, capacity: 10, validateTimeoutMs, compileTimeoutMs: 5_000 });
  pools.push(p);
  return p;
};
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

// The pool is the last line of defence, behind the screening: patterns normally run on RE2, but
// one with a lookaround runs on JavaScript's engine, where (a|a)* backtracks 2^n on "aaaa…a!".
const HOSTILE = { type: "string", pattern: "^(a|a)*(?!b)$" };
const SIMPLE = { type: "object", properties: { n: { type: "integer" } } };
const hostileValue = `${"a".repeat(40)}!`;

describe("SchemaWorkerPool", () => {
  it("stops a validation past its time limit, replaces the worker and keeps serving", async () => {
    // The default limit: the replacement's first jobs compile before they validate, within it, even on a busy machine.
    const p = pool(1, 2_000);
    const error = await p.validate("h", "2020-12", HOSTILE, hostileValue).catch((e: unknown) => e);
    // Stopped (2^40 steps would take far longer than the test), not finished.
    expect(isGenserveError(error) && error.code).toBe("schema_timeout");
    expect(p.status()).toMatchObject({ replaced: 1, busy: 0, stuck: 0 });
    // The replacement compiles what it needs on its own.
    expect(await p.validate("s", "2020-12", SIMPLE, { n: 1 })).toEqual({ valid: true });
    expect((await p.validate("h", "2020-12", HOSTILE, "aaa")).valid).toBe(true);
  });

  it("serves other callers on another worker while one validation hangs", async () => {
    const p = pool(2, 60_000);
    let settled = false;
    const hanging = p.validate("h", "2020-12", HOSTILE, hostileValue, { owner: "mallory" }).catch((e: unknown) => e).finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 50));
    for (let i = 0; i < 5; i++) expect(await p.validate("s", "2020-12", SIMPLE, { n: i }, { owner: "alice" })).toEqual({ valid: true });
    expect(settled).toBe(false); // still backtracking in the other worker
    await p.close();
    expect(isGenserveError(await hanging) && ((await hanging) as { code: string }).code).toBe("service_unavailable");
  });

  it("takes waiting jobs in turn per owner, so one owner's backlog does not starve another", async () => {
    const p = pool(1, 1_000);
    const order: string[] = [];
    const jobs = [
      ...Array.from({ length: 3 }, () => p.validate("h", "2020-12", HOSTILE, hostileValue, { owner: "mallory" }).catch(() => order.push("mallory"))),
      p.validate("s", "2020-12", SIMPLE, { n: 1 }, { owner: "alice" }).then(() => order.push("alice")),
    ];
    await Promise.all(jobs);
    // Alice waits for at most one of mallory's jobs, not all three.
    expect(order.indexOf("alice")).toBeLessThanOrEqual(1);
  });

  it("gives up waiting when the caller's signal aborts", async () => {
    const p = pool(1, 2_000);
    const hanging = p.validate("h", "2020-12", HOSTILE, hostileValue).catch(() => undefined);
    const controller = new AbortController();
    const waiting = p.validate("s", "2020-12", SIMPLE, { n: 1 }, { signal: controller.signal });
    controller.abort(new Error("run timed out"));
    await expect(waiting).rejects.toThrow("run timed out");
    await hanging;
  });
});
