import { describe, expect, it } from "vitest";
import { finishNote } from "./finish-reason";

describe("finishNote", () => {
  it("names a finish reason other than stop, and nothing for stop or none", () => {
    expect(finishNote("length")).toEqual({ finishReason: "length" });
    expect(finishNote("content-filter")).toEqual({ finishReason: "content-filter" });
    expect(finishNote("stop")).toEqual({});
    expect(finishNote(undefined)).toEqual({});
  });
});
