import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isGenserveError } from "../errors";
import { parseWith, readBodyText } from "./body";

const errorsOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    if (isGenserveError(error)) return error.errors;
    throw error;
  }
  throw new Error("expected a validation error");
};

describe("parseWith", () => {
  it("tells a missing field from one of the wrong type, with the shape's own message", () => {
    const shape = z.object({ name: z.string({ error: "must be a string" }), count: z.number({ error: "must be a number" }) }).strict();
    expect(errorsOf(() => parseWith(shape, { name: 5 }))).toEqual([
      { path: "/name", message: "must be a string" },
      { path: "/count", message: "is required" },
    ]);
    expect(errorsOf(() => parseWith(shape, { name: "a", count: 1, extra: true }))).toEqual([{ path: "/extra", message: "is not a known field" }]);
  });
});

describe("readBodyText", () => {
  const post = (body: string, headers: Record<string, string> = {}) => new Request("http://localhost/x", { method: "POST", body, headers });
  const status = (promise: Promise<unknown>) =>
    promise.then(
      () => 200,
      (error: unknown) => (isGenserveError(error) ? error.status : 500),
    );

  it("reads a body of a declared length, and one streamed without a length", async () => {
    expect(await readBodyText(post("héllo", { "content-length": "6" }), 100, "limit")).toBe("héllo");
    expect(await readBodyText(post("héllo"), 100, "limit")).toBe("héllo");
  });

  it("refuses a body past the limit whether its length is declared, understated or absent", async () => {
    expect(await status(readBodyText(post("x".repeat(101), { "content-length": "101" }), 100, "limit"))).toBe(413);
    // A Request made in-process may declare less than it holds; over HTTP the parser would stop at the declared length.
    expect(await status(readBodyText(post("x".repeat(101), { "content-length": "10" }), 100, "limit"))).toBe(413);
    const streamed = new Request("http://localhost/x", {
      method: "POST",
      body: new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode("x".repeat(101))), c.close()) }),
      duplex: "half",
    } as RequestInit);
    expect(await status(readBodyText(streamed, 100, "limit"))).toBe(413);
  });
});
