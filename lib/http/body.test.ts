import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isGenserveError } from "../errors";
import { parseWith } from "./body";

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
